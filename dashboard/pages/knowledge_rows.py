"""What the pages of the agent's knowledge share (facts, locations, team members, escalation rules, calendars):
one row of the org looked up once, a form whose view runs one knowledge service and shows its refusal on the form,
and a delete that asks first. Every rule is the service's (knowledge.services), which never changes the row it is
given, so a refused save leaves the page's row as it was."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from core.errors import Conflict
from orgs.tenancy import get_for_org

from ..mixins import AdminRequiredMixin


def changed(form) -> dict:
    """The fields the form changed, as the service's keyword arguments (an edit sends only those)."""
    return {field: form.cleaned_data[field] for field in form.changed_data}


class KnowledgeRowMixin(AdminRequiredMixin):
    """The org's row named by the URL (`url_kwarg`), found once; another org's or a missing one is the 404 page.
    The template gets it as `context_name`."""

    rows = None  # a model or a queryset
    url_kwarg = ""
    context_name = ""

    def get_row(self):
        if not hasattr(self, "_row"):
            self._row = get_for_org(self.rows, self.org, self.kwargs[self.url_kwarg])
        return self._row

    def get_context_data(self, **kwargs):
        return super().get_context_data(**{self.context_name: self.get_row()}, **kwargs)


class KnowledgeFormView(AdminRequiredMixin, FormView):
    """Create or edit: `write(form)` calls the service; its refusal lands on the form (`service_errors` with this
    view's `conflict`, `missing`, `missing_field` and `field_names`), else `saved(row)` is the message and the
    list page (`list_url`) comes next."""

    list_url = ""
    conflict: str | None = None
    missing: str | None = None
    missing_field: str | None = None
    field_names: dict[str, str] | None = None

    def write(self, form):
        raise NotImplementedError

    def saved(self, row) -> str:
        raise NotImplementedError

    def form_valid(self, form):
        with form.service_errors(conflict=self.conflict, missing=self.missing, missing_field=self.missing_field,
                                 fields=self.field_names):
            row = self.write(form)
        if form.errors:
            return self.form_invalid(form)
        messages.success(self.request, self.saved(row))
        return redirect(self.list_url)


class KnowledgeDeleteView(KnowledgeRowMixin, TemplateView):
    """GET asks for confirmation; POST runs `delete(row)`. A refusal (Conflict: something still depends on the
    row) is shown as an error on `refused_redirect(row)`."""

    list_url = ""

    def delete(self, row) -> None:
        raise NotImplementedError

    def deleted(self, row) -> str:
        raise NotImplementedError

    def refused_redirect(self, row):
        return redirect(self.list_url)

    def post(self, request, *args, **kwargs):
        row = self.get_row()
        try:
            self.delete(row)
        except Conflict as exc:
            messages.error(request, str(exc))
            return self.refused_redirect(row)
        messages.success(request, self.deleted(row))
        return redirect(self.list_url)
