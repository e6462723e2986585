"""The national identity numbers python-stdnum validates, per country (the organization's default phone region)."""

import functools
import importlib

# Personal identity, social-security and health numbers; business and tax numbers of companies are not a person's.
_MODULES = {
    "AT": ["at.vnr"], "AU": ["au.tfn"], "BE": ["be.nn"], "BR": ["br.cpf"], "CA": ["ca.sin"], "CH": ["ch.ssn"],
    "CN": ["cn.ric"], "DE": ["de.idnr"], "DK": ["dk.cpr"], "ES": ["es.dni", "es.nie"], "FI": ["fi.hetu"],
    "FR": ["fr.nir"], "GB": ["gb.nhs"], "IE": ["ie.pps"], "IN": ["in_.aadhaar", "in_.pan"], "IT": ["it.codicefiscale"],
    "MX": ["mx.curp"], "NL": ["nl.bsn"], "NO": ["no.fodselsnummer"], "PL": ["pl.pesel"], "PT": ["pt.cc"],
    "SE": ["se.personnummer"], "ZA": ["za.idnr"], "US": [],
}


@functools.cache
def national_id_modules(region: str) -> tuple:
    modules = []
    for name in _MODULES.get((region or "").upper(), []):
        try:
            modules.append(importlib.import_module(f"stdnum.{name}"))
        except ImportError:  # a module a later python-stdnum renamed: that country simply has fewer checks
            continue
    return tuple(modules)
