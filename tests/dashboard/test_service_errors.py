"""`DashboardForm.service_errors`: the one place a service's refusal becomes errors on a dashboard form."""

import pytest
from django import forms

from core.errors import Conflict, InvalidTransition, NotFound, ValidationFailed
from dashboard.forms import DashboardForm


class PlaceForm(DashboardForm):
    name = forms.CharField()
    team_member = forms.CharField(required=False)


def valid_form():
    form = PlaceForm({"name": "Main street"})
    assert form.is_valid()
    return form


def test_a_validation_failure_lands_beside_its_fields_and_above_the_form():
    form = valid_form()
    with form.service_errors():
        raise ValidationFailed(field_errors={"name": ["Too long."], "other": ["Odd."]}, form_errors=["Refused."])
    assert form.errors == {"name": ["Too long."], "__all__": ["Odd.", "Refused."]}


def test_a_conflict_lands_on_its_field_with_the_pages_message_when_given():
    form = valid_form()
    with form.service_errors(conflict="A place with this name already exists."):
        raise Conflict("name", "name already exists.")
    assert form.errors == {"name": ["A place with this name already exists."]}
    form = valid_form()
    with form.service_errors():
        raise Conflict("name", "name already exists.")
    assert form.errors == {"name": ["name already exists."]}


def test_service_field_names_are_renamed_to_the_forms():
    form = valid_form()
    with form.service_errors(fields={"team_member_id": "team_member"}):
        raise ValidationFailed(field_errors={"team_member_id": ["Unknown."]})
    assert form.errors == {"team_member": ["Unknown."]}
    form = valid_form()
    with form.service_errors(fields={"team_member_id": "team_member"}):
        raise Conflict("team_member_id")
    assert list(form.errors) == ["team_member"]


def test_not_found_lands_only_when_the_page_says_what_went_missing():
    form = valid_form()
    with form.service_errors(missing="That team member no longer exists.", missing_field="team_member"):
        raise NotFound()
    assert form.errors == {"team_member": ["That team member no longer exists."]}
    form = valid_form()
    with pytest.raises(NotFound), form.service_errors():
        raise NotFound()
    assert not form.errors


def test_other_errors_escape_and_success_leaves_the_form_clean():
    form = valid_form()
    with pytest.raises(InvalidTransition), form.service_errors():
        raise InvalidTransition("no")
    with form.service_errors():
        pass
    assert not form.errors
