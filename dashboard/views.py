"""Dashboard pages. Each view checks input with a form, calls one `orgs` service or selector, and renders.

Every page that needs a signed-in user goes through `OrgMixin` / `AdminRequiredMixin` (mixins.py).
"""

import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect
from django.urls import reverse_lazy
from django.utils import timezone
from django.views.generic import FormView, TemplateView, View

from orgs import invitations, selectors, services
from orgs.errors import TooManyInvitations
from orgs.models import Membership
from orgs.tenancy import get_for_org
from voiceagent.errors import NotFound, ValidationFailed

from . import accounts, once
from .attempts import AccountBrake, AttemptLimitMixin, too_many
from .forms import (
    ApiKeyCreateForm,
    LoginForm,
    MemberAddForm,
    MemberRoleForm,
    OrganizationForm,
    PasswordResetForm,
    SetPasswordForm,
    SignupForm,
)
from .mixins import AdminRequiredMixin, OrgMixin, remember_org, resolve_membership

NEW_API_KEY = "api_key"  # the kind of secret stashed in once.py


# --- Accounts ---------------------------------------------------------------------------------------------


class SignupView(AttemptLimitMixin, FormView):
    """Creates an organization and its first admin, and logs the admin in."""

    attempt_scope = "signup"

    template_name = "dashboard/auth/signup.html"
    form_class = SignupForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            return redirect("dashboard:home")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form):
        data = form.cleaned_data
        # Always a brand-new user: an email taken since the form's check is a Conflict here, never a login as the
        # account that took it.
        with form.service_errors():
            org, user = services.organization_signup(
                name=data["organization_name"], email=data["email"], password=data["password"]
            )
        if form.errors:
            return self.form_invalid(form)
        login(self.request, user, backend="django.contrib.auth.backends.ModelBackend")
        remember_org(self.request, org)
        messages.success(self.request, f"Welcome! {org.name} is ready.")
        return redirect("dashboard:home")


class LoginView(AttemptLimitMixin, auth_views.LoginView):
    """Braked per client address (AttemptLimitMixin) and per account (AccountBrake): while an account waits, no
    password is even checked for it, right or wrong."""

    attempt_scope = "login"
    template_name = "dashboard/auth/login.html"
    form_class = LoginForm
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        self.brake = AccountBrake("login", request.POST.get("username", ""))
        wait = self.brake.wait()
        if wait:
            return too_many(request, wait, account=True)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        self.brake.succeeded()
        response = super().form_valid(form)
        resolve_membership(self.request)
        return response

    def form_invalid(self, form):
        self.brake.failed()
        return super().form_invalid(form)


class LogoutView(auth_views.LogoutView):
    """POST only (Django's LogoutView refuses GET), so a link or an image cannot log anyone out."""

    next_page = reverse_lazy("dashboard:login")


# Password reset: Django's own views, in the dashboard's auth layout. The e-mailed link is built on DASHBOARD_URL
# (not the request's Host header), and the "check your inbox" page is the same whether or not the address has an
# account. Invitations (accounts.py) send the same set-password link.


class PasswordResetView(AttemptLimitMixin, auth_views.PasswordResetView):
    """Braked per client address, and per address asked for: a mailbox gets at most 5 reset mails an hour,
    however many clients ask (the answer page stays the same)."""

    attempt_scope = "password-reset"
    attempt_limit = 5

    def form_valid(self, form):
        if not AccountBrake("password-reset", form.cleaned_data.get("email", "")).allow(5, 3600):
            return redirect(self.get_success_url())  # the same page as a sent reset: nothing is revealed
        return super().form_valid(form)
    template_name = "dashboard/auth/password_reset.html"
    form_class = PasswordResetForm
    subject_template_name = "dashboard/auth/password_reset_subject.txt"
    email_template_name = "dashboard/auth/password_reset_email.txt"
    success_url = reverse_lazy("dashboard:password-reset-done")

    @property
    def extra_email_context(self):
        return {"dashboard_url": settings.DASHBOARD_URL}


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "dashboard/auth/password_reset_done.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "dashboard/auth/password_reset_confirm.html"
    form_class = SetPasswordForm
    success_url = reverse_lazy("dashboard:password-reset-complete")


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "dashboard/auth/password_reset_complete.html"


class OrgSwitchView(OrgMixin, View):
    """Makes another of the user's organizations the current one. Not a member of it: 404."""

    http_method_names = ["post"]

    def post(self, request):
        org_id = _uuid_or_none(request.POST.get("org"))
        membership = selectors.membership_for_user(user=request.user, org_id=org_id) if org_id else None
        if membership is None:
            raise NotFound()
        remember_org(request, membership.organization)
        return redirect("dashboard:home")


def _uuid_or_none(value):
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


# --- Settings: organization ---------------------------------------------------------------------------


class OrganizationSettingsView(AdminRequiredMixin, FormView):
    """Members see the settings; admins change them through `organization_update`."""

    template_name = "dashboard/settings/organization.html"
    form_class = OrganizationForm
    admin_methods = ("POST",)
    fields = ("name", "default_phone_region", "auto_save_contacts", "call_recording_enabled", "meetings_enabled")

    def get_initial(self):
        return {field: getattr(self.org, field) for field in self.fields}

    def form_valid(self, form):
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        if changes:
            with form.service_errors():
                services.organization_update(org=self.org, by=self.request.user, **changes)
            if form.errors:
                return self.form_invalid(form)
            messages.success(self.request, "Settings saved.")
        else:
            messages.info(self.request, "Nothing to save: no setting changed.")
        return redirect("dashboard:settings-organization")


# --- Settings: API keys ---------------------------------------------------------------------------------


class ApiKeyListView(OrgMixin, TemplateView):
    """Every member sees the keys (never a plaintext); only admins see the create and revoke controls."""

    template_name = "dashboard/settings/api_keys.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(keys=selectors.api_key_list(org=self.org), **kwargs)


class ApiKeyCreateView(AdminRequiredMixin, FormView):
    template_name = "dashboard/settings/api_key_new.html"
    form_class = ApiKeyCreateForm

    def form_valid(self, form):
        with form.service_errors():
            key, plaintext = services.api_key_create(
                org=self.org,
                created_by=self.request.user,
                name=form.cleaned_data["name"],
                scope=form.cleaned_data["scope"],
            )
        if form.errors:
            return self.form_invalid(form)
        once.stash(self.request, NEW_API_KEY, key_id=str(key.pk), plaintext=plaintext)
        return redirect("dashboard:api-key-created")


class ApiKeyCreatedView(once.ShowOnceMixin, AdminRequiredMixin, TemplateView):
    """Shows a new key's plaintext exactly once (once.py)."""

    template_name = "dashboard/settings/api_key_created.html"
    once_kind = NEW_API_KEY
    once_gone_message = "A key is shown only once, right after it is created. Create a new one if needed."
    once_gone_url = "dashboard:api-keys"

    def get_once_context(self, pending):
        key = selectors.api_key_list(org=self.org).filter(pk=pending["key_id"]).first()
        return {"key": key} if key is not None else None


class ApiKeyRevokeView(AdminRequiredMixin, TemplateView):
    """GET asks for confirmation; POST revokes. Revocation is immediate for the API."""

    template_name = "dashboard/settings/api_key_revoke.html"

    def get_key(self):
        return get_for_org(selectors.api_key_list(org=self.org), self.org, self.kwargs["key_id"])

    def get(self, request, *args, **kwargs):
        return self.render_to_response(self.get_context_data(key=self.get_key()))

    def post(self, request, *args, **kwargs):
        key = self.get_key()
        if key.is_active:
            services.api_key_revoke(key=key, revoked_by=request.user)
            messages.success(request, f"Key “{key.name}” ({key.key_prefix}…) is revoked. Requests with it now get 401.")
        else:
            messages.info(request, f"Key “{key.name}” was already revoked.")
        return redirect("dashboard:api-keys")


# --- Settings: members ----------------------------------------------------------------------------------


class MembersView(AdminRequiredMixin, FormView):
    """Everyone sees the members; admins add people and change roles."""

    template_name = "dashboard/settings/members.html"
    form_class = MemberAddForm
    admin_methods = ("POST",)

    def get_context_data(self, **kwargs):
        kwargs.setdefault("role_errors", {})
        kwargs.setdefault("invitations", invitations.open_invitations(org=self.org) if self.membership.is_admin else [])
        kwargs.setdefault("now", timezone.now())
        memberships = list(selectors.membership_list(org=self.org))
        for membership in memberships:
            membership.role_form = MemberRoleForm(
                initial={"role": membership.role}, auto_id=f"id_m{membership.pk}_%s"
            )
            membership.role_errors = kwargs["role_errors"].get(membership.pk, [])
        return super().get_context_data(memberships=memberships, **kwargs)

    def form_valid(self, form):
        """Invites the address. The answer is the same whether or not it has an account anywhere: nobody is added
        until they accept, signed in as that address."""
        try:
            with form.service_errors():
                invitation = accounts.invite(
                    org=self.org, by=self.request.user, email=form.cleaned_data["email"],
                    role=form.cleaned_data["role"],
                )
        except TooManyInvitations as exc:
            form.add_error(None, exc.message)
            return self.render_to_response(self.get_context_data(form=form), status=429)
        if form.errors:
            return self.form_invalid(form)
        messages.success(
            self.request,
            f"Invitation sent to {invitation.email}. They join as {invitation.get_role_display().lower()} when they "
            "accept it (the link works for 7 days).",
        )
        return redirect("dashboard:members")


class MemberRoleView(MembersView):
    """POST only: changes one member's role. A refused change re-renders the members page with the error
    beside that member's role."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        membership = get_for_org(Membership, self.org, self.kwargs["membership_id"])
        form = MemberRoleForm(request.POST)
        error = None
        if form.is_valid():
            try:
                services.membership_set_role(membership=membership, by=request.user, role=form.cleaned_data["role"])
            except ValidationFailed as exc:
                details = exc.details or {}
                error = [*details.get("formErrors", []), *sum(details.get("fieldErrors", {}).values(), [])]
        else:
            error = form.errors.get("role", ["Choose a role."])
        if error:
            context = self.get_context_data(form=MemberAddForm(), role_errors={membership.pk: error})
            return self.render_to_response(context)
        messages.success(request, f"{membership.user.email} is now {form.cleaned_data['role']}.")
        return redirect("dashboard:members")
