"""Dashboard forms. They check input shape only; the rules live in the services (`orgs.services`,
`meetings.services`, ...), whose typed errors (`ValidationFailed`, `Conflict`) are put back on the form beside the
field they concern."""

from contextlib import contextmanager
from datetime import datetime, time, timedelta

import phonenumbers
from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.utils import timezone

from meetings.validation import NAME, TEXT
from orgs.models import ApiKey, Membership
from voiceagent import jsonparse
from voiceagent.errors import Conflict, DomainError, NotFound, ValidationFailed
from webhooks.models import EVENT_TYPES

User = get_user_model()


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
        except NotFound:
            if missing is None:
                raise
            self.add_error(missing_field, missing)


class DashboardForm(DashboardFormMixin, forms.Form):
    pass


class DayRangeForm(DashboardForm):
    """A list filter's `since`/`until`: whole UTC days, the end not before the start."""

    since = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["until"] < data["since"]:
            self.add_error("until", "The end date must not be before the start date.")
        return data

    def day_bounds(self) -> tuple:
        """(start of `since`, start of the day after `until`), each an aware UTC datetime or None."""
        start = lambda day: timezone.make_aware(datetime.combine(day, time.min))  # noqa: E731
        since, until = self.cleaned_data.get("since"), self.cleaned_data.get("until")
        return (start(since) if since else None, start(until) + timedelta(days=1) if until else None)


class SignupForm(DashboardForm):
    email = forms.EmailField(max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"}))
    password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters, not a common password.",
    )
    organization_name = forms.CharField(
        label="Organization name", max_length=200, widget=forms.TextInput(attrs={"autocomplete": "organization"})
    )

    def clean_email(self):
        email = User.objects.normalize_email(self.cleaned_data["email"]).lower()
        if User.objects.filter(username=email).exists():
            raise forms.ValidationError("An account with this email already exists. Log in instead.")
        return email

    def clean_password(self):
        password = self.cleaned_data["password"]
        password_validation.validate_password(password)
        return password


class LoginForm(DashboardFormMixin, AuthenticationForm):
    """Users log in with their email, which is also their username (always stored lower-case)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = "Email"
        self.fields["username"].widget = forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})

    def clean_username(self):
        return (self.cleaned_data.get("username") or "").strip().lower()


class PasswordResetForm(DashboardFormMixin, auth_forms.PasswordResetForm):
    """Django's reset request, styled: it mails only active users with a usable password, and says nothing
    about whether the address has an account."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["email"].widget.attrs["autofocus"] = True


class SetPasswordForm(DashboardFormMixin, auth_forms.SetPasswordForm):
    """Django's set-password form (reset links and invitations), with the sign-up form's plain-text help."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["new_password1"].help_text = "At least 8 characters, not a common password."


class ApiKeyCreateForm(DashboardForm):
    name = forms.CharField(
        max_length=200, help_text="What uses this key, e.g. “CRM sync”. Only you and your team see it."
    )
    scope = forms.ChoiceField(
        label="Access",
        choices=[
            (ApiKey.Scope.READ, "Read only: GET requests"),
            (ApiKey.Scope.READ_WRITE, "Read and write: also POST, PUT, PATCH and DELETE"),
        ],
        initial=ApiKey.Scope.READ,
        widget=forms.RadioSelect,
    )


class MemberAddForm(DashboardForm):
    email = forms.EmailField(max_length=254)
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class MemberRoleForm(DashboardForm):
    role = forms.ChoiceField(choices=Membership.Role.choices)


class OrganizationForm(DashboardForm):
    """A plain form, not a ModelForm: a ModelForm writes onto the instance while validating, and the
    write itself belongs to `organization_update`."""

    name = forms.CharField(label="Organization name", max_length=200)
    default_phone_region = forms.CharField(
        label="Default phone region",
        max_length=2,
        min_length=2,
        help_text="Two-letter country code (e.g. US, GB, DE) used for phone numbers written without a +country code.",
        widget=forms.TextInput(attrs={"autocapitalize": "characters", "size": 4}),
    )
    auto_save_contacts = forms.BooleanField(label="Save new callers as contacts automatically", required=False)
    call_recording_enabled = forms.BooleanField(label="Record calls", required=False)
    meetings_enabled = forms.BooleanField(label="Meetings product", required=False)

    def clean_default_phone_region(self):
        region = self.cleaned_data["default_phone_region"].strip().upper()
        if region not in phonenumbers.SUPPORTED_REGIONS:
            raise forms.ValidationError("Enter a two-letter country code such as US or GB.")
        return region


# --- Contacts, knowledge base, locations, team, webhooks (dashboard/pages/) -----------------------------------
# Shapes only: E.164, unique labels and names, time zones, webhook URLs and event lists are the services' rules,
# and their errors come back through `apply_domain_error`.


class ContactSearchForm(forms.Form):
    q = forms.CharField(
        label="Search contacts", required=False, max_length=200,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Name, phone or email"}),
    )


class ContactForm(DashboardForm):
    phone_number = forms.CharField(
        label="Phone number", max_length=32,
        help_text="With +country code, or in the organization's default region.",
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"}),
    )
    name = forms.CharField(max_length=200, required=False)
    email = forms.EmailField(max_length=254, required=False)
    notes = forms.CharField(max_length=5000, required=False, widget=forms.Textarea(attrs={"rows": 4}))


class FactForm(DashboardForm):
    ORG_WIDE = ""

    label = forms.CharField(max_length=200, help_text="A short name the agent and your team know it by.")
    content = forms.CharField(
        max_length=10_000, widget=forms.Textarea(attrs={"rows": 6}),
        help_text="What the agent should say or know, in plain words.",
    )
    location = forms.ChoiceField(label="Applies to", required=False)

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location"].choices = [(self.ORG_WIDE, "Every location")] + [
            (str(location.pk), location.name) for location in locations
        ]

    def clean_location(self):
        return self.cleaned_data["location"] or None


class LocationForm(DashboardForm):
    name = forms.CharField(max_length=200)
    address = forms.CharField(max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))
    timezone = forms.CharField(
        label="Time zone", max_length=64, help_text="An IANA name, e.g. America/New_York.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )
    phone_number = forms.CharField(
        label="Phone number", max_length=32, widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"})
    )


class EscalationRuleForm(DashboardForm):
    EVERYWHERE = ""

    name = forms.CharField(max_length=200, help_text="Unique in your organization, e.g. “Allergy questions”.")
    description = forms.CharField(
        max_length=5000, required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the agent listens for, in plain words (the runtime's classifier reads this).",
    )
    keywords = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One per line or comma-separated: words that hand the caller over when heard (up to 50).",
    )
    destination_type = forms.ChoiceField(label="Hand over to", choices=[("team_member", "A team member"),
                                                                        ("phone", "A phone number")])
    destination_team_member = forms.ChoiceField(label="Team member", required=False)
    destination_phone = forms.CharField(label="Phone number", max_length=32, required=False,
                                        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"}))
    location = forms.ChoiceField(label="Applies to", required=False)
    enabled = forms.BooleanField(required=False, initial=True, help_text="Off: the agent does not use the rule.")

    def __init__(self, *args, team_members=(), locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["destination_team_member"].choices = [("", "—")] + [
            (str(member.pk), member.name) for member in team_members
        ]
        self.fields["location"].choices = [(self.EVERYWHERE, "Every location")] + [
            (str(location.pk), location.name) for location in locations
        ]

    def clean_keywords(self):
        raw = self.cleaned_data["keywords"].replace(",", "\n")
        return [keyword.strip() for keyword in raw.splitlines() if keyword.strip()]

    def clean(self):
        data = super().clean()
        # The field the type does not use is sent as null, so switching the type in the form just works.
        if data.get("destination_type") == "team_member":
            data["destination_phone"] = None
        elif data.get("destination_type") == "phone":
            data["destination_team_member"] = None
        data["destination_team_member"] = data.get("destination_team_member") or None
        data["destination_phone"] = data.get("destination_phone") or None
        data["location"] = data.get("location") or None
        return data


class CalendarForm(DashboardForm):
    """A calendar with its weekly-hours editor: one field per day, `09:00-12:00, 13:00-17:00` (empty: closed)."""

    DAY_LABELS = {"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday", "fri": "Friday",
                  "sat": "Saturday", "sun": "Sunday"}

    name = forms.CharField(max_length=200, help_text="Unique in your organization, e.g. “Table reservations”.")
    timezone = forms.CharField(
        label="Time zone", max_length=64, help_text="The hours below are local times in this IANA zone.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )
    slot_minutes = forms.IntegerField(label="Slot length (minutes)", min_value=5, max_value=480, initial=30)
    location = forms.ChoiceField(label="Location", required=False)

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location"].choices = [("", "Not tied to a location")] + [
            (str(location.pk), location.name) for location in locations
        ]
        for day, label in self.DAY_LABELS.items():
            self.fields[f"hours_{day}"] = forms.CharField(
                label=label, required=False,
                widget=forms.TextInput(attrs={"placeholder": "closed (e.g. 09:00-12:00, 13:00-17:00)",
                                              "autocomplete": "off"}),
            )

    @classmethod
    def initial_hours(cls, weekly_hours: list[dict]) -> dict:
        by_day = {day: [] for day in cls.DAY_LABELS}
        for window in sorted(weekly_hours, key=lambda w: w["start"]):
            by_day[window["day"]].append(f"{window['start']}-{window['end']}")
        return {f"hours_{day}": ", ".join(spans) for day, spans in by_day.items()}

    def clean(self):
        data = super().clean()
        weekly_hours = []
        for day in self.DAY_LABELS:
            for span in filter(None, (part.strip() for part in (data.get(f"hours_{day}") or "").split(","))):
                start, _, end = span.partition("-")
                weekly_hours.append({"day": day, "start": start.strip(), "end": end.strip()})
        data["weekly_hours"] = weekly_hours
        data["location"] = data.get("location") or None
        return data

    def apply_domain_error(self, exc):
        """`weekly_hours` problems name items; they are shown above the days, in words."""
        if isinstance(exc, ValidationFailed) and "weekly_hours" in (exc.details or {}).get("fieldErrors", {}):
            for message in exc.details["fieldErrors"].pop("weekly_hours"):
                self.add_error(None, f"Weekly hours: {message}")
        return super().apply_domain_error(exc)

    def service_values(self) -> dict:
        data = self.cleaned_data
        return {"name": data["name"], "timezone_name": data["timezone"], "slot_minutes": data["slot_minutes"],
                "location": data["location"], "weekly_hours": data["weekly_hours"]}


class BookingFilterForm(DayRangeForm):
    calendar = forms.ChoiceField(label="Calendar", required=False)
    location = forms.ChoiceField(label="Location", required=False)
    status = forms.ChoiceField(label="Status", required=False, choices=[("", "Any"), ("confirmed", "Confirmed"),
                                                                         ("canceled", "Canceled")])

    def __init__(self, *args, calendars=(), locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["calendar"].choices = [("", "All calendars")] + [(str(c.pk), c.name) for c in calendars]
        self.fields["location"].choices = [("", "All locations")] + [(str(loc.pk), loc.name) for loc in locations]


class TeamMemberForm(DashboardForm):
    name = forms.CharField(max_length=200)
    role = forms.CharField(max_length=200, required=False, help_text="E.g. “Manager” or “Head chef”.")
    email = forms.EmailField(max_length=254, required=False)
    phone_number = forms.CharField(
        label="Phone number", max_length=32, required=False,
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"}),
    )


class WebhookForm(DashboardForm):
    url = forms.CharField(
        label="Endpoint URL", max_length=2048,
        help_text="An https:// address on the public internet that answers 2xx within 15 seconds.",
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/webhooks/voice-agent", "autocomplete": "off"}),
    )
    events = forms.MultipleChoiceField(
        label="Events to send", widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one event type."},
    )
    description = forms.CharField(max_length=5000, required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = [(event, event) for event in EVENT_TYPES]


class WebhookRotateForm(DashboardForm):
    grace_period_seconds = forms.TypedChoiceField(
        label="The old secret",
        coerce=int,
        choices=[
            (0, "Stops signing now"),
            (3600, "Also signs for 1 hour"),
            (86400, "Also signs for 24 hours"),
        ],
        initial=0,
        widget=forms.RadioSelect,
        help_text="During a grace period every delivery carries two signatures, so your receiver can switch "
        "to the new secret without missing one.",
    )


# --- Meetings (dashboard/pages/meetings.py) -------------------------------------------------------------------
# The outcome editor: the title and summary as text, the four lists as JSON (the same shapes the event carries).
# The form checks only that the JSON parses; `meetings.services.outcome_update` decides the rest, and its dotted
# field errors (`tickets.0.title`) land beside the list they concern.


class _JSONList(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "mono"})

    def to_python(self, value):
        value = super().to_python(value)
        try:
            return jsonparse.loads(value or "[]")
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}") from None


class OutcomeForm(DashboardForm):
    JSON_FIELDS = ("tickets", "decisions", "open_questions", "action_items")

    title = forms.CharField(max_length=NAME, required=False)
    summary = forms.CharField(
        max_length=TEXT, widget=forms.Textarea(attrs={"rows": 5}), help_text="2 to 5 sentences."
    )
    tickets = _JSONList(
        required=False,
        help_text='A JSON array of {"title", "description", "acceptance_criteria": [..], "file_refs": '
        '[{"repo", "path"}], "confidence": 0..1, "assumptions": [..], "provenance"}.',
    )
    decisions = _JSONList(required=False, help_text='A JSON array of {"decision", "context"}.')
    open_questions = _JSONList(
        required=False, label="Open questions", help_text='A JSON array of {"question", "context"}.'
    )
    action_items = _JSONList(
        required=False, label="Action items", help_text='A JSON array of {"who", "what", "due": "YYYY-MM-DD" or null}.'
    )

    def apply_domain_error(self, exc):
        """Dotted paths from the outcome validator go to their top-level field, with the path in the message."""
        if not isinstance(exc, ValidationFailed):
            return super().apply_domain_error(exc)
        details = exc.details or {}
        for path, messages in details.get("fieldErrors", {}).items():
            top = path.split(".", 1)[0]
            for message in messages:
                if top in self.fields:
                    self.add_error(top, message if path == top else f"{path}: {message}")
                else:
                    self.add_error(None, f"{path}: {message}")
        for message in details.get("formErrors", []):
            self.add_error(None, message)
        return None
