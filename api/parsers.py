"""The JSON parser of every JSON endpoint (/v1, the agent runtime's, the hooks): DRF's, reading through
`core.jsonparse`, so a body nested too deep is a ParseError (400 `Validation failed`) like any malformed one."""

import codecs

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

from core import jsonparse


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return jsonparse.loads(text, parse_constant=strict_constant if self.strict else None)
        except ValueError as exc:  # a decoding error too (UnicodeDecodeError), as DRF's parser does
            raise ParseError(f"JSON parse error - {exc}")
