"""The knowledge base: the facts the agent answers from, listed by location; admins create, edit and delete them.

Every write goes through `knowledge.services.fact_*`, which bumps the org's knowledge version in the same
transaction, so the agent runtime's next knowledge read (a new ETag, knowledge.selectors.knowledge_etag) already
has it.
Members read; only admins write (what the agent tells callers is an admin's call).
"""

from django import forms
from django.core.paginator import Paginator
from django.views.generic import TemplateView

from calls.selectors import calls_with_unanswered_questions, fact_use_counts
from knowledge import selectors, services
from knowledge.models import Fact

from ..forms import DashboardForm
from ..mixins import OrgMixin
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin, changed

SERVED_NEXT_READ = "The agent gets it on its very next knowledge read: no restart, no wait."


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



class KnowledgeView(OrgMixin, TemplateView):
    """Facts grouped by where they apply: every location first, then each location by name."""

    template_name = "dashboard/knowledge/list.html"

    def get_context_data(self, **kwargs):
        locations = list(selectors.location_list(org=self.org).order_by("name", "id"))
        facts = list(selectors.fact_list(org=self.org).order_by("label", "id"))
        uses = fact_use_counts(org=self.org)
        for fact in facts:
            fact.use_count = uses.get(str(fact.pk), 0)
        groups = [{"location": None, "title": "Every location", "facts": [f for f in facts if f.location_id is None]}]
        for location in locations:
            groups.append({
                "location": location, "title": location.name,
                "facts": [f for f in facts if f.location_id == location.pk],
            })
        return super().get_context_data(
            groups=groups, fact_count=len(facts), knowledge_version=selectors.knowledge_version(self.org), **kwargs
        )


class FactFormMixin:
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    template_name = "dashboard/knowledge/form.html"
    form_class = FactForm
    list_url = "dashboard:knowledge"
    conflict = "A fact with this label already exists."
    missing, missing_field = "This location no longer exists. Choose another.", "location"

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "locations": selectors.location_list(org=self.org).order_by("name", "id")}

    def saved(self, fact) -> str:
        return f"Fact “{fact.label}” saved. {SERVED_NEXT_READ}"


class FactCreateView(FactFormMixin, KnowledgeFormView):
    def get_initial(self):
        # "Add a fact" from a location's group preselects that location; from an unanswered question (the
        # Unanswered questions page, a call page), the question is the label to answer.
        return {"location": self.request.GET.get("location", ""), "label": self.request.GET.get("label", "")[:200],
                "content": self.request.GET.get("content", "")[:10_000]}

    def write(self, form):
        return services.fact_create(org=self.org, actor=self.request.user, **form.cleaned_data)


class FactMixin(KnowledgeRowMixin):
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    rows = Fact.objects.select_related("location")
    url_kwarg, context_name = "fact_id", "fact"


class FactEditView(FactFormMixin, FactMixin, KnowledgeFormView):
    def get_initial(self):
        fact = self.get_row()
        return {"label": fact.label, "content": fact.content, "location": str(fact.location_id or "")}

    def write(self, form):
        return services.fact_update(fact=self.get_row(), actor=self.request.user, **changed(form))


class FactDeleteView(FactMixin, KnowledgeDeleteView):
    template_name = "dashboard/knowledge/delete.html"
    list_url = "dashboard:knowledge"

    def delete(self, fact) -> None:
        services.fact_delete(fact=fact, actor=self.request.user)

    def deleted(self, fact) -> str:
        return f"Fact “{fact.label}” deleted. The agent stops using it on its next read."


class UnansweredQuestionsView(OrgMixin, TemplateView):
    """What callers asked that the agent could not answer, newest first, each with its call and an "Add a fact"
    that opens the fact form with the question as its label."""

    template_name = "dashboard/knowledge/unanswered.html"
    page_size = 25

    def get_context_data(self, **kwargs):
        page = Paginator(calls_with_unanswered_questions(org=self.org), self.page_size).get_page(
            self.request.GET.get("page"))
        questions = [{"call": call, "question": question} for call in page.object_list
                     for question in call.unanswered_questions if question is not None]  # null: content deleted
        return super().get_context_data(page=page, questions=questions, **kwargs)
