"""Settings → Members, and joining, leaving and creating organizations: the members page (admins invite and change
roles), accepting an invitation (signed in, or creating the invited account), an admin's resend, revoke and removal,
a member leaving, and a signed-in user's new organization."""

from django import forms
from django.contrib import messages
from django.contrib.auth import login, password_validation
from django.contrib.auth.mixins import LoginRequiredMixin
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.generic import FormView, TemplateView, View

from core.errors import Conflict, ValidationFailed
from knowledge.selectors import location_list
from orgs import invitations, selectors, services
from orgs.errors import InvitationInvalid, LastAdmin, TooManyInvitations, TooManyOrganizations, WrongAccount
from orgs.models import Invitation, Membership
from orgs.tenancy import get_for_org
from orgs.verification import EmailNotVerified, is_verified

from .. import accounts
from ..attempts import address_brake
from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin, remember_org


class NewAccountForm(DashboardForm):
    password = forms.CharField(
        strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters, not a common password.",
    )

    def clean_password(self):
        password = self.cleaned_data["password"]
        password_validation.validate_password(password)
        return password


class MemberScopeForm(DashboardForm):
    """A role and, for a location manager, its locations (checked against the org by orgs.scopes, whose errors
    land on `location_ids`)."""

    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)
    location_ids = forms.MultipleChoiceField(
        label="Locations", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="A location manager sees and works on these locations only. Other roles: none.",
    )

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location_ids"].choices = [(str(location.pk), location.name) for location in locations]

    def scope(self) -> dict:
        """The service's `role` and `location_ids` (None when none is checked)."""
        return {"role": self.cleaned_data["role"], "location_ids": self.cleaned_data.get("location_ids") or None}


class MemberAddForm(MemberScopeForm):
    field_order = ["email", "role", "location_ids"]
    email = forms.EmailField(max_length=254)


class MemberRoleForm(MemberScopeForm):
    pass




class InvitationAcceptView(TemplateView):
    """The e-mailed link. Signed in as the invited address: a button joins. Signed out: log in (an account exists)
    or choose a password (none does) to create the invited account and join. Every invalid link (unknown, expired,
    used, revoked, resent) gets one page."""

    template_name = "dashboard/auth/invitation.html"

    def _invitation(self):
        return invitations.invitation_for_link(invitation_id=self.kwargs["invitation_id"], token=self.kwargs["token"])

    def _invalid(self, exc):
        return render(self.request, "dashboard/auth/invitation_invalid.html", {"message": exc.message}, status=404)

    def get(self, request, *args, **kwargs):
        try:
            invitation = self._invitation()
        except InvitationInvalid as exc:
            return self._invalid(exc)
        return self.render_to_response(self._context(invitation, NewAccountForm()))

    def _context(self, invitation, form):
        user = self.request.user
        return {
            "invitation": invitation, "form": form,
            "signed_in_as": user.email if user.is_authenticated else None,
            "is_invitee": user.is_authenticated and user.email.lower() == invitation.email,
            "has_account": invitations.account_exists(invitation.email),
        }

    def post(self, request, *args, **kwargs):
        braked = address_brake(request, "invitation", 10)
        if braked:
            return braked
        link = {"invitation_id": self.kwargs["invitation_id"], "token": self.kwargs["token"]}
        try:
            if request.user.is_authenticated:
                membership = invitations.invitation_accept(user=request.user, **link)
            else:
                form = NewAccountForm(request.POST)
                if not form.is_valid():
                    return self.render_to_response(self._context(self._invitation(), form), status=400)
                membership = invitations.invitation_accept_new_account(password=form.cleaned_data["password"], **link)
                login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
        except InvitationInvalid as exc:
            return self._invalid(exc)
        except WrongAccount as exc:
            messages.error(request, exc.message)
            return redirect(request.path)
        except Conflict as exc:
            messages.error(request, exc.message)
            return redirect(request.path)
        remember_org(request, membership.organization)
        messages.success(request, f"Welcome to {membership.organization.name}.")
        return redirect("dashboard:home")


class MembersView(AdminRequiredMixin, FormView):
    """Everyone sees the members; admins add people, change roles and a location manager's locations. A member
    limited to locations sees no one (memberships are the organization's as a whole), only their own locations and
    how to leave."""

    template_name = "dashboard/settings/members.html"
    form_class = MemberAddForm
    admin_methods = ("POST",)

    def locations(self):
        return location_list(org=self.org).order_by("name", "id")

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "locations": self.locations()}

    def get_context_data(self, **kwargs):
        kwargs.setdefault("role_errors", {})
        kwargs.setdefault("invitations", invitations.open_invitations(org=self.org) if self.membership.is_admin else [])
        kwargs.setdefault("now", timezone.now())
        kwargs.setdefault("email_verified", is_verified(self.request.user))
        locations = list(self.locations())
        names = {location.pk: location.name for location in locations}
        memberships = list(selectors.membership_list(org=self.org))
        for membership in memberships:
            membership.role_form = MemberRoleForm(
                initial={"role": membership.role, "location_ids": [str(pk) for pk in membership.location_ids or ()]},
                auto_id=f"id_m{membership.pk}_%s", locations=locations,
            )
            membership.role_errors = kwargs["role_errors"].get(membership.pk, [])
            membership.location_names = _named(membership.location_ids, names)
        for invitation in kwargs["invitations"]:
            invitation.location_names = _named(invitation.location_ids, names)
        return super().get_context_data(
            memberships=memberships, own_location_names=_named(self.membership.location_ids, names), **kwargs
        )

    def form_valid(self, form):
        """Invites the address. The answer is the same whether or not it has an account anywhere: nobody is added
        until they accept, signed in as that address."""
        try:
            with form.service_errors():
                invitation = accounts.invite(
                    org=self.org, by=self.request.user, email=form.cleaned_data["email"], **form.scope()
                )
        except TooManyInvitations as exc:
            form.add_error(None, exc.message)
            return self.render_to_response(self.get_context_data(form=form), status=429)
        except EmailNotVerified as exc:
            form.add_error(None, exc.message)
            return self.render_to_response(self.get_context_data(form=form), status=403)
        if form.errors:
            return self.form_invalid(form)
        messages.success(
            self.request,
            f"Invitation sent to {invitation.email}. They join as {invitation.get_role_display().lower()} when they "
            "accept it (the link works for 7 days).",
        )
        return redirect("dashboard:members")


def _named(location_ids, names: dict) -> list[str] | None:
    """A scope's location names (None: the whole organization)."""
    return None if location_ids is None else [names.get(pk, "a deleted location") for pk in location_ids]


class MemberRoleView(MembersView):
    """POST only: changes one member's role (and a location manager's locations). A refused change re-renders the
    members page with the error beside that member's role."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        membership = get_for_org(Membership, self.org, self.kwargs["membership_id"])
        form = MemberRoleForm(request.POST, locations=self.locations())
        error = None
        if form.is_valid():
            with form.service_errors():
                services.membership_set_role(membership=membership, by=request.user, **form.scope())
            if form.errors:
                error = [*form.non_field_errors(), *form.errors.get("role", []), *form.errors.get("location_ids", [])]
        else:
            error = [*form.errors.get("role", []), *form.errors.get("location_ids", [])] or ["Choose a role."]
        if error:
            context = self.get_context_data(form=MemberAddForm(locations=self.locations()),
                                            role_errors={membership.pk: error})
            return self.render_to_response(context)
        messages.success(request, f"{membership.user.email} is now {form.cleaned_data['role']}.")
        return redirect("dashboard:members")


class InvitationActionMixin(AdminRequiredMixin):
    http_method_names = ["post"]

    def get_invitation(self) -> Invitation:
        return get_for_org(Invitation, self.org, self.kwargs["invitation_id"])


class InvitationResendView(InvitationActionMixin, View):
    def post(self, request, *args, **kwargs):
        invitation = self.get_invitation()
        try:
            accounts.resend(invitation=invitation, by=request.user)
        except (Conflict, TooManyInvitations, EmailNotVerified) as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"A new invitation link went to {invitation.email}; the previous one no "
                                      "longer works.")
        return redirect("dashboard:members")


class InvitationRevokeView(InvitationActionMixin, View):
    def post(self, request, *args, **kwargs):
        invitation = invitations.invitation_revoke(invitation=self.get_invitation(), by=request.user)
        messages.success(request, f"The invitation of {invitation.email} is revoked: its link no longer works.")
        return redirect("dashboard:members")


class MemberRemoveView(AdminRequiredMixin, View):
    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        membership = get_for_org(Membership.objects.select_related("user"), self.org, self.kwargs["membership_id"])
        try:
            services.membership_remove(membership=membership, by=request.user)
        except LastAdmin as exc:
            return render(request, "dashboard/errors/conflict.html", {"message": exc.message}, status=409)
        messages.success(request, f"{membership.user.email} no longer belongs to {self.org.name}.")
        return redirect("dashboard:members")


class LeaveView(OrgMixin, View):
    """Any member leaves the current organization (not its last admin)."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        org = self.org
        try:
            services.membership_leave(user=request.user, org=org)
        except LastAdmin as exc:
            return render(request, "dashboard/errors/conflict.html", {"message": exc.message}, status=409)
        messages.success(request, f"You left {org.name}.")
        return redirect("dashboard:home")


class OrganizationCreateForm(DashboardForm):
    name = forms.CharField(label="Organization name", max_length=200)


class OrganizationCreateView(LoginRequiredMixin, FormView):
    """A signed-in user creates another organization (they are its admin) and switches to it. Open to a user who
    belongs to none (after leaving their last one), so nobody is stuck without support."""

    template_name = "dashboard/settings/organization_new.html"
    form_class = OrganizationCreateForm

    def form_valid(self, form):
        try:
            org = services.organization_create_for(user=self.request.user, name=form.cleaned_data["name"])
        except (Conflict, TooManyOrganizations) as exc:  # the caps (orgs.services): said above the form
            form.add_error(None, exc.message)
            return self.render_to_response(self.get_context_data(form=form), status=exc.status)
        except ValidationFailed as exc:
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        remember_org(self.request, org)
        messages.success(self.request, f"{org.name} is ready. You are its admin.")
        return redirect("dashboard:home")
