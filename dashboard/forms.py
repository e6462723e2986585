"""The bases of every dashboard form; each page's own form lives beside its views in `pages/`.

Forms check input shape only; the rules live in the services (`orgs.services`, `meetings.services`, ...), whose typed
errors (`ValidationFailed`, `Conflict`) `service_errors` puts back on the form beside the field they concern."""

from contextlib import contextmanager
from datetime import datetime, time, timedelta

from django import forms
from django.utils import timezone

from core import numbers
from core.errors import Conflict, DomainError, NotFound, ValidationFailed
from core.timefmt import DAY_RANGE_ERROR, supported_day
from orgs.tenancy import ScopeForbidden


class DashboardFormMixin:
    """Accessible errors: each field's error list is tied to its input through `aria-describedby`
    (Django adds `aria-invalid`), and service errors land beside the right field."""

    def add_error(self, field, error):
        super().add_error(field, error)
        for name in self.errors:
            if name in self.fields:
                bound = self[name]
                described = [f"{bound.auto_id}_error"]
                if bound.help_text:
                    described.insert(0, f"{bound.auto_id}_helptext")
                self.fields[name].widget.attrs["aria-describedby"] = " ".join(described)

    def apply_domain_error(self, exc: DomainError) -> None:
        """Shows a service's validation or conflict error on the form; anything else is not a form error."""
        if isinstance(exc, Conflict):
            self.add_error(exc.field if exc.field in self.fields else None, exc.message)
        elif isinstance(exc, ValidationFailed):
            details = exc.details or {}
            for field, messages in details.get("fieldErrors", {}).items():
                for message in messages:
                    self.add_error(field if field in self.fields else None, message)
            for message in details.get("formErrors", []):
                self.add_error(None, message)
        else:
            raise exc

    @contextmanager
    def service_errors(
        self,
        *,
        conflict: str | None = None,
        missing: str | None = None,
        missing_field: str | None = None,
        fields: dict[str, str] | None = None,
    ):
        """Runs the block (a service call) and puts the refusal it raises on this form instead of letting it
        escape; the caller then answers `form_invalid` when `form.errors`:

            with form.service_errors(conflict="A location with this name already exists."):
                location = services.location_create(org=self.org, **form.cleaned_data)
            if form.errors:
                return self.form_invalid(form)

        `ValidationFailed` and `Conflict` always land (`apply_domain_error`); `conflict` replaces a clash's message
        (the service's names the API field). `fields` renames the service's field names to the form's
        (`{"destination_team_member_id": "destination_team_member"}`). A `NotFound` lands only when `missing` is
        given (something the input named was deleted meanwhile), on `missing_field` or above the form; otherwise
        it escapes and the page is the 404 page, as for every other error."""
        fields = fields or {}
        try:
            yield self
        except Conflict as exc:
            self.apply_domain_error(Conflict(fields.get(exc.field, exc.field), conflict or exc.message))
        except ValidationFailed as exc:
            details = exc.details or {}
            if fields:
                renamed = {fields.get(name, name): errors for name, errors in details.get("fieldErrors", {}).items()}
                exc = ValidationFailed(field_errors=renamed, form_errors=details.get("formErrors"))
            self.apply_domain_error(exc)
        except ScopeForbidden as exc:  # a location manager's change outside its locations: said above the form
            self.add_error(None, exc.message)
        except NotFound:
            if missing is None:
                raise
            self.add_error(missing_field, missing)


class BoundedIntegerField(forms.IntegerField):
    """An integer typed as text, refused before conversion when longer than any number we take (core/numbers.py:
    converting a long digit string costs time quadratic in its length)."""

    def to_python(self, value):
        if isinstance(value, str) and len(value.strip()) > numbers.MAX_CHARS:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return super().to_python(value)


class DashboardForm(DashboardFormMixin, forms.Form):
    pass


class RangeDateField(forms.DateField):
    """A filter's day: within core.timefmt's supported days (a day near the calendar's ends would overflow the
    range arithmetic), else a form error, as the API's 400."""

    def clean(self, value):
        day = super().clean(value)
        if day is not None and not supported_day(day):
            raise forms.ValidationError(DAY_RANGE_ERROR)
        return day


class DayRangeForm(DashboardForm):
    """A list filter's `since`/`until`: whole days of the organization's zone (the page's), the end not before the
    start."""

    since = RangeDateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = RangeDateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["until"] < data["since"]:
            self.add_error("until", "The end date must not be before the start date.")
        return data

    def day_bounds(self) -> tuple:
        """(local midnight starting `since`, local midnight after `until`), each aware, or None."""
        start = lambda day: timezone.make_aware(datetime.combine(day, time.min))  # noqa: E731
        since, until = self.cleaned_data.get("since"), self.cleaned_data.get("until")
        return (start(since) if since else None, start(until) + timedelta(days=1) if until else None)
