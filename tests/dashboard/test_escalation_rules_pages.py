"""Settings → Escalation rules: members see the rules and get 403 on changes; admins create, edit, switch off and
on, and delete them, each change served by the runtime's very next knowledge read; another org's rule is 404."""

import pytest

from knowledge.models import EscalationRule, TeamMember
from knowledge.services import escalation_rule_create
from tests.support.runtime import Runtime

pytestmark = pytest.mark.django_db


@pytest.fixture
def member_target(org):
    return TeamMember.objects.create(organization=org, name="Sam Manager", phone_number="+14155550111")


@pytest.fixture
def rule(org, member_target):
    return escalation_rule_create(org=org, name="Angry caller", destination_type="team_member",
                                  destination_team_member=member_target, keywords=["manager"])


def served(org):
    return [r["name"] for r in Runtime(org).knowledge().json()["data"]["escalation_rules"]]


def test_an_admin_creates_a_rule_and_the_runtimes_next_read_serves_it(admin_client, org, member_target):
    page = admin_client.get("/settings/escalation-rules/new/")
    assert page.status_code == 200 and "Sam Manager" in page.content.decode()
    response = admin_client.post("/settings/escalation-rules/new/", {
        "name": "Allergy", "keywords": "allergic, anaphylaxis\nepipen", "description": "",
        "destination_type": "team_member", "destination_team_member": str(member_target.pk),
        "destination_phone": "", "location": "", "enabled": "on"})
    assert response.status_code == 302, response.content.decode()[:3000]
    rule = EscalationRule.objects.get(name="Allergy")
    assert rule.keywords == ["allergic", "anaphylaxis", "epipen"] and rule.destination_team_member == member_target
    assert served(org) == ["Allergy"]
    listing = admin_client.get("/settings/escalation-rules/").content.decode()
    assert "Allergy" in listing and "epipen" in listing


def test_a_phone_rule_and_form_errors(admin_client, org):
    bad = admin_client.post("/settings/escalation-rules/new/", {
        "name": "Night line", "keywords": "", "description": "", "destination_type": "phone",
        "destination_phone": "12", "location": ""})
    assert bad.status_code == 200
    body = bad.content.decode()
    assert "Enter a valid phone number" in body
    assert not EscalationRule.objects.exists()
    good = admin_client.post("/settings/escalation-rules/new/", {
        "name": "Night line", "keywords": "", "description": "Caller says it is an emergency",
        "destination_type": "phone", "destination_phone": "(415) 555-0199", "location": "", "enabled": "on"})
    assert good.status_code == 302
    assert EscalationRule.objects.get().destination_phone == "+14155550199"


def test_switching_off_and_on_and_editing(admin_client, org, rule):
    assert served(org) == ["Angry caller"]
    admin_client.post(f"/settings/escalation-rules/{rule.pk}/enabled/", {"enabled": "0"})
    assert served(org) == []
    admin_client.post(f"/settings/escalation-rules/{rule.pk}/enabled/", {"enabled": "1"})
    assert served(org) == ["Angry caller"]
    edit = admin_client.get(f"/settings/escalation-rules/{rule.pk}/edit/").content.decode()
    assert "manager" in edit
    response = admin_client.post(f"/settings/escalation-rules/{rule.pk}/edit/", {
        "name": "Upset caller", "keywords": "manager\nrefund", "description": "", "destination_type": "phone",
        "destination_team_member": "", "destination_phone": "+14155550123", "location": "", "enabled": "on"})
    assert response.status_code == 302
    rule.refresh_from_db()
    assert (rule.name, rule.keywords, rule.destination_type, rule.destination_team_member_id) == (
        "Upset caller", ["manager", "refund"], "phone", None)
    assert served(org) == ["Upset caller"]


def test_deleting_a_rule(admin_client, org, rule):
    assert "Past escalations stay" in admin_client.get(f"/settings/escalation-rules/{rule.pk}/delete/").content.decode()
    assert admin_client.post(f"/settings/escalation-rules/{rule.pk}/delete/").status_code == 302
    assert not EscalationRule.objects.exists() and served(org) == []


def test_members_read_but_cannot_change(member_client, rule):
    assert "Angry caller" in member_client.get("/settings/escalation-rules/").content.decode()
    for path in ("/settings/escalation-rules/new/", f"/settings/escalation-rules/{rule.pk}/edit/",
                 f"/settings/escalation-rules/{rule.pk}/delete/"):
        assert member_client.get(path).status_code == 403
        assert member_client.post(path, {"name": "x"}).status_code == 403
    assert member_client.post(f"/settings/escalation-rules/{rule.pk}/enabled/", {"enabled": "0"}).status_code == 403
    rule.refresh_from_db()
    assert rule.enabled and rule.name == "Angry caller"


def test_another_orgs_rule_is_404(outsider_client, rule):
    for path in (f"/settings/escalation-rules/{rule.pk}/edit/", f"/settings/escalation-rules/{rule.pk}/delete/"):
        assert outsider_client.get(path).status_code == 404
    assert outsider_client.post(f"/settings/escalation-rules/{rule.pk}/enabled/", {"enabled": "0"}).status_code == 404
    rule.refresh_from_db()
    assert rule.enabled
