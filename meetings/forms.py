"""The outcome editor: the title and summary as text, the four lists as JSON (the same shapes the event
carries). The form checks only that the JSON parses; `meetings.services.outcome_update` decides the rest, and its
dotted field errors (`tickets.0.title`) land beside the list they concern."""

import json

from django import forms

from dashboard.forms import DashboardForm
from voiceagent.errors import ValidationFailed

from .validation import NAME, TEXT


class _JSONList(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "mono"})

    def to_python(self, value):
        value = super().to_python(value)
        try:
            return json.loads(value or "[]")
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
