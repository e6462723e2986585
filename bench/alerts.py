"""Alert evaluation (alerts.evaluation.evaluate, the `alerts.evaluate` beat task's body) for 1,000 organizations with
50 rules each, over a year of 1,000,000 calls among them, in process on PostgreSQL:

1. The worker time of one evaluation minute (wall and CPU of the worker process), p50 and max of BENCH_ROUNDS
   minutes in a row after the first (the first opens an alert for every rule already breaching, thousands at once,
   and is reported apart); goal < 10 s per minute.
2. The line watchdog drill: a location with calls every weekday at 10:10 and 10:25 for four weeks gets none this
   week; the minutes from 10:00 on are evaluated with a clock the bench sets, and the first firing minute is
   reported; goal: within 2 minutes of the expected call.

Every organization has 2 locations (New York hours 09:00-17:00 on one) and the 50 rules mix all seven metrics, with
windows from 15 to 1,440 minutes, half of them per location, a few only during open hours. Calls are spread over the
last 365 days with the rollup triggers disabled while seeding (the evaluation reads the calls' own index, not the
rollups, and seeding through the triggers would take minutes); a few thousand unhandled callbacks and escalations
sit in the last day. Everything lives in a `voiceagent_bench_alerts` database on DATABASE_URL's server and is kept
between runs. BENCH_ALERTS_ORGS and BENCH_ALERTS_CALLS scale it down.
"""

import os
import resource
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
ORGS = int(os.environ.get("BENCH_ALERTS_ORGS", 1000))
CALLS = int(os.environ.get("BENCH_ALERTS_CALLS", 1_000_000))
RULES_PER_ORG = 50
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
PREFIX = "Alerts Bench Org"
CHUNK = 100_000

SEED_CALLS_SQL = """
INSERT INTO calls_call (id, organization_id, created_at, updated_at, runtime_call_id, status, started_at, ended_at,
                        duration_seconds, direction, from_number, disposition, classification, scorable, score,
                        summary, outcome, outcome_tags, trail, transcript, quality_checks, location_id, facts_used,
                        unanswered_questions, fields)
SELECT gen_random_uuid(), o.org, s.at, s.at, 'bench-' || (%(offset)s + g),
       CASE WHEN g %% 13 = 0 THEN 'abandoned' ELSE 'completed' END, s.at, s.at + interval '2 minutes', 120, 'inbound',
       '+1415555' || lpad((g %% 10000)::text, 4, '0'), 'completed', 'real_engagement', true, 80, 'Bench call', 'info',
       '[]', '[]', '[]', '[]', o.location, '[]',
       CASE WHEN g %% 7 = 0 THEN '["Do you deliver?"]'::jsonb ELSE '[]'::jsonb END, '{}'
  FROM generate_series(1, %(count)s) AS g,
       LATERAL (SELECT now() - make_interval(secs => ((%(offset)s + g) * 2654435761::bigint %% (365 * 86400))::float8)
               AS at) s,
       LATERAL (SELECT (%(orgs)s::uuid[])[1 + (%(offset)s + g) %% cardinality(%(orgs)s::uuid[])] AS org,
                       (%(locations)s::uuid[])[1 + (%(offset)s + g) %% cardinality(%(locations)s::uuid[])] AS location)
               o
"""
# A call's org is the (n mod N)-th and its location the (n mod 2N)-th of [every org's Uptown, every org's Downtown]:
# the same org either way.


def _database_url() -> str:
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'voiceagent_bench_alerts'").fetchone():
            conn.execute("CREATE DATABASE voiceagent_bench_alerts")
    return urlunsplit(server._replace(path="/voiceagent_bench_alerts"))


def _rules_for(org, locations) -> list:
    from alerts.models import AlertRule

    metrics = [("calls", "lt", 1), ("calls", "gt", 500), ("abandoned_calls", "gt", 50),
               ("callbacks_waiting", "gt", 40), ("escalations_waiting", "gt", 40),
               ("unanswered_question_rate", "gt", 0.9), ("webhook_failure_rate", "gt", 0.5),
               ("line_silent", "lt", 1)]
    windows = [15, 30, 60, 120, 240, 720, 1440]
    rules = []
    for n in range(RULES_PER_ORG):
        metric, comparator, threshold = metrics[n % len(metrics)]
        per_location = n % 2 == 0 and metric != "webhook_failure_rate"
        rules.append(AlertRule(
            organization=org, name=f"Rule {n}", metric=metric, comparator=comparator, threshold=threshold,
            window_minutes=windows[n % len(windows)], min_calls=1 if metric != "line_silent" else 3,
            cooldown_minutes=60, channels=[], only_during_open_hours=n % 5 == 0,
            location_ids=[locations[n % 2]] if per_location else None,
        ))
    return rules


def _seed():
    from django.db import connection, transaction

    from alerts.models import AlertRule
    from calls.models import Call, CallbackRequest, Escalation
    from orgs.models import Location, Organization

    orgs = list(Organization.objects.filter(name__startswith=PREFIX).order_by("name"))
    if len(orgs) < ORGS:
        begin = time.perf_counter()
        fresh = Organization.objects.bulk_create(
            [Organization(name=f"{PREFIX} {n:05d}", time_zone="America/New_York") for n in range(len(orgs), ORGS)])
        hours = [{"day": day, "start": "09:00", "end": "17:00"} for day in ("mon", "tue", "wed", "thu", "fri")]
        places = []
        for org in fresh:
            places += [Location(organization=org, name="Uptown", timezone="America/New_York", weekly_hours=hours),
                       Location(organization=org, name="Downtown", timezone="America/Chicago")]
        Location.objects.bulk_create(places)
        rules = []
        for n, org in enumerate(fresh):
            rules += _rules_for(org, [places[2 * n].pk, places[2 * n + 1].pk])
        AlertRule.objects.bulk_create(rules, batch_size=5000)
        print(f"  seeded {len(fresh):,} organizations, their locations and {len(rules):,} rules in "
              f"{time.perf_counter() - begin:.0f} s", flush=True)
        orgs = list(Organization.objects.filter(name__startswith=PREFIX).order_by("name"))[:ORGS]
    orgs = orgs[:ORGS]
    org_ids = [org.pk for org in orgs]
    by_org = {}
    for pk, org_id, name in Location.objects.filter(organization_id__in=org_ids).values_list(
            "pk", "organization_id", "name"):
        by_org.setdefault(org_id, {})[name] = pk
    # [org1-Uptown, ..., orgN-Uptown, org1-Downtown, ..., orgN-Downtown]: index i goes with org i mod N.
    locations = [by_org[pk]["Uptown"] for pk in org_ids] + [by_org[pk]["Downtown"] for pk in org_ids]
    have = Call.objects.filter(organization_id__in=org_ids).count()
    if have < CALLS:
        begin = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("ALTER TABLE calls_call DISABLE TRIGGER USER")
            while have < CALLS:
                chunk = min(CHUNK, CALLS - have)
                cursor.execute(SEED_CALLS_SQL, {"offset": have, "count": chunk, "orgs": [str(pk) for pk in org_ids],
                                                "locations": [str(pk) for pk in locations]})
                have += chunk
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign keys' checks, before the ALTER
            cursor.execute("ALTER TABLE calls_call ENABLE TRIGGER USER")
        print(f"  seeded {CALLS:,} calls over a year in {time.perf_counter() - begin:.0f} s", flush=True)
        recent = list(Call.objects.filter(organization_id__in=org_ids, started_at__gte=_now() - _days(1))
                      .values_list("pk", "organization_id")[:5000])
        CallbackRequest.objects.bulk_create([
            CallbackRequest(organization_id=org_id, call_id=pk, requested_window="asap", reason="Bench")
            for pk, org_id in recent[::2]])
        Escalation.objects.bulk_create([
            Escalation(organization_id=org_id, call_id=pk, rule_name="Bench", destination_type="phone",
                       destination_phone="+14155550100", triggered_by="keyword") for pk, org_id in recent[1::2]])
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE calls_call; ANALYZE calls_callbackrequest; ANALYZE calls_escalation; "
                           "ANALYZE alerts_alertrule; ANALYZE alerts_alert")
    return orgs


def _now():
    from django.utils import timezone

    return timezone.now()


def _days(n):
    from datetime import timedelta

    return timedelta(days=n)


def _drill():
    """The watchdog drill on an organization of its own, with a clock the bench sets."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from alerts.evaluation import evaluate
    from alerts.models import Alert
    from alerts.services import alert_rule_create
    from calls.models import Call
    from orgs.models import Location, Organization

    zone = ZoneInfo("America/New_York")
    org = Organization.objects.create(name=f"Watchdog drill {time.time():.0f}", time_zone="America/New_York")
    shop = Location.objects.create(organization=org, name="Shop", timezone="America/New_York",
                                   weekly_hours=[{"day": "wed", "start": "09:00", "end": "17:00"}])
    today = datetime.now(zone).date()
    wednesday = today + timedelta(days=(2 - today.weekday()) % 7 - 7)  # the last Wednesday before today
    for weeks in range(1, 5):
        day = wednesday - timedelta(weeks=weeks)
        for hh, mm in ((10, 10), (10, 25)):
            Call.objects.create(organization=org, runtime_call_id=f"drill-{weeks}-{hh}{mm}", location=shop,
                                status="completed", started_at=datetime(day.year, day.month, day.day, hh, mm,
                                                                        tzinfo=zone))
    alert_rule_create(org=org, name="Shop line", metric="line_silent", window_minutes=15, min_calls=1,
                      location_ids=[shop.pk], channels=[])
    expected_at = datetime(wednesday.year, wednesday.month, wednesday.day, 10, 10, tzinfo=zone)
    minute = expected_at - timedelta(minutes=10)
    fired = None
    while minute <= expected_at + timedelta(minutes=30):
        if evaluate(now=minute, organization_ids=[org.pk])["fired"]:
            fired = minute
            break
        minute += timedelta(minutes=1)
    Alert.objects.filter(organization=org).delete()
    return fired, expected_at


def main():
    os.environ["DATABASE_URL"] = _database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from datetime import timedelta

    from django.core.management import call_command

    from alerts.evaluation import evaluate
    from alerts.models import Alert

    call_command("migrate", verbosity=0)
    orgs = _seed()
    org_ids = [org.pk for org in orgs]
    print(f"alerts.evaluate: {len(orgs):,} organizations x {RULES_PER_ORG} rules, {CALLS:,} calls over a year, "
          f"{ROUNDS} minutes", flush=True)
    Alert.objects.filter(organization_id__in=org_ids).delete()
    start = _now().replace(second=0, microsecond=0)
    walls, cpus = [], []
    for n in range(ROUNDS):
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        begin = time.perf_counter()
        stats = evaluate(now=start + timedelta(minutes=n), organization_ids=org_ids)
        walls.append(time.perf_counter() - begin)
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpus.append(after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime)
        print(f"  minute {n + 1}: {walls[-1]:.2f} s wall, {cpus[-1]:.2f} s worker CPU; {stats['rules']:,} rules, "
              f"{stats['judged']:,} judgements, {stats['fired']:,} fired, {stats['resolved']:,} resolved",
              flush=True)
    # The first minute opens an alert for every rule already breaching (thousands at once, each in its own
    # transaction with its event and e-mail): reported apart from the minutes after it, the steady state.
    steady, steady_cpu = sorted(walls[1:] or walls), sorted(cpus[1:] or cpus)
    worst = steady[-1]
    print(f"worker time per minute after the first: p50 {steady[len(steady) // 2]:.2f} s, max {worst:.2f} s "
          f"(CPU p50 {steady_cpu[len(steady_cpu) // 2]:.2f} s); the first minute {walls[0]:.2f} s "
          f"(CPU {cpus[0]:.2f} s)")
    print(f"goal: < 10 s per minute for {len(orgs):,} x {RULES_PER_ORG} rules: {'OK' if worst < 10 else 'MISSED'}")

    fired, expected_at = _drill()
    late = None if fired is None else (fired - expected_at).total_seconds() / 60
    print(f"line_silent drill: the call expected at {expected_at:%H:%M} local did not come; fired at "
          f"{fired:%H:%M} ({late:+.0f} min)" if fired else "line_silent drill: never fired")
    print(f"goal: fires within 2 minutes: {'OK' if late is not None and late <= 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
