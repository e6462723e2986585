"""The knowledge base: the facts the agent answers from, listed by location; admins create, edit and delete them.

Every write goes through `orgs.services.fact_*`, which bumps the org's knowledge version in the same
transaction, so the agent runtime's next knowledge read (a new ETag, orgs.selectors.knowledge_etag) already has it.
Members read; only admins write (what the agent tells callers is an admin's call).
"""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from calls.selectors import calls_with_unanswered_questions, fact_use_counts
from knowledge import selectors, services
from knowledge.models import Fact
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, NotFound, ValidationFailed

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin

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
    template_name = "dashboard/knowledge/form.html"
    form_class = FactForm

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        kwargs["locations"] = selectors.location_list(org=self.org).order_by("name", "id")
        return kwargs

    def save(self, form):
        raise NotImplementedError

    def form_valid(self, form):
        try:
            fact = self.save(form)
        except (ValidationFailed, Conflict) as exc:
            if isinstance(exc, Conflict):
                exc.message = "A fact with this label already exists."
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        except NotFound:
            # The chosen location was deleted meanwhile.
            form.add_error("location", "This location no longer exists. Choose another.")
            return self.form_invalid(form)
        messages.success(self.request, f"Fact “{fact.label}” saved. {SERVED_NEXT_READ}")
        return redirect("dashboard:knowledge")


class FactCreateView(FactFormMixin, AdminRequiredMixin, FormView):
    def get_initial(self):
        # "Add a fact" from a location's group preselects that location; from an unanswered question (the
        # Unanswered questions page, a call page), the question is the label to answer.
        return {"location": self.request.GET.get("location", ""), "label": self.request.GET.get("label", "")[:200],
                "content": self.request.GET.get("content", "")[:10_000]}

    def save(self, form):
        return services.fact_create(org=self.org, **form.cleaned_data)


class FactMixin(AdminRequiredMixin):
    def get_fact(self) -> Fact:
        if not hasattr(self, "_fact"):
            self._fact = get_for_org(Fact.objects.select_related("location"), self.org, self.kwargs["fact_id"])
        return self._fact


class FactEditView(FactFormMixin, FactMixin, FormView):
    def get_initial(self):
        fact = self.get_fact()
        return {"label": fact.label, "content": fact.content, "location": str(fact.location_id or "")}

    def get_context_data(self, **kwargs):
        return super().get_context_data(fact=self.get_fact(), **kwargs)

    def save(self, form):
        fact = self.get_fact()
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        try:
            return services.fact_update(fact=fact, **changes) if changes else fact
        except (ValidationFailed, Conflict, NotFound):
            fact.refresh_from_db()  # the service set the refused values on this instance
            raise


class FactDeleteView(FactMixin, TemplateView):
    """GET asks for confirmation; POST deletes."""

    template_name = "dashboard/knowledge/delete.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(fact=self.get_fact(), **kwargs)

    def post(self, request, *args, **kwargs):
        fact = self.get_fact()
        services.fact_delete(fact=fact)
        messages.success(request, f"Fact “{fact.label}” deleted. The agent stops using it on its next read.")
        return redirect("dashboard:knowledge")


class UnansweredQuestionsView(OrgMixin, TemplateView):
    """What callers asked that the agent could not answer, newest first, each with its call and an "Add a fact"
    that opens the fact form with the question as its label."""

    template_name = "dashboard/knowledge/unanswered.html"
    page_size = 25

    def get_context_data(self, **kwargs):
        page = Paginator(calls_with_unanswered_questions(org=self.org), self.page_size).get_page(
            self.request.GET.get("page"))
        questions = [{"call": call, "question": question} for call in page.object_list
                     for question in call.unanswered_questions]
        return super().get_context_data(page=page, questions=questions, **kwargs)
