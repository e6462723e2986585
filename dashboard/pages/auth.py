"""Signing up, logging in and out, and resetting a password: Django's auth views in the dashboard's layout, braked
per client address and per account (attempts.py)."""

import time

from django import forms
from django.contrib import messages
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import get_user_model, login, password_validation, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views import View
from django.views.generic import FormView, TemplateView

from core.errors import Conflict, ValidationFailed
from notifications.services import notify_account_locked, notify_password_reset
from orgs import services, verification

from .. import verification_mail
from ..attempts import AccountBrake, AttemptLimitMixin, login_username, too_many
from ..forms import DashboardForm, DashboardFormMixin
from ..mixins import resolve_membership

User = get_user_model()


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
        # Whether the address has an account is never said here: the answer is the same page either way.
        return User.objects.normalize_email(self.cleaned_data["email"]).lower()

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

    error_messages = {
        **AuthenticationForm.error_messages,
        "unconfirmed": "Confirm your e-mail address before you log in: open the link we mailed to it. Sign up again "
                       "with the same address for a new link.",
    }

    def clean_username(self):
        return login_username(self.cleaned_data.get("username"))

    def confirm_login_allowed(self, user):
        """An account whose address was never confirmed does not sign in: whoever made it may not own the address
        (a squatter's sign-up), and the owner's confirmation must find no session of theirs (orgs.services
        account_confirm). Said only to whoever typed the right password."""
        super().confirm_login_allowed(user)
        if verification.never_verified(user):
            raise ValidationError(self.error_messages["unconfirmed"], code="unconfirmed")


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


class VerifyEmailForm(DashboardForm):
    code = forms.CharField(
        label="Confirmation code", max_length=200,
        widget=forms.TextInput(attrs={"autocomplete": "off", "data-code-from-fragment": True}),
        help_text="The link in our e-mail fills this in; the e-mail also shows the code.",
    )


class ConfirmAccountForm(DashboardForm):
    """The second step of a confirmation: the click on the button that names the address, and, for an account never
    confirmed, the password its confirmer chooses (orgs.services.account_confirm)."""

    code = forms.CharField(max_length=200, widget=forms.HiddenInput)
    new_password1 = forms.CharField(
        label="Password", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters, not a common password.",
    )
    new_password2 = forms.CharField(
        label="Password again", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, user, choose_password: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        if not choose_password:
            del self.fields["new_password1"], self.fields["new_password2"]

    def clean(self):
        data = super().clean()
        first, second = data.get("new_password1"), data.get("new_password2")
        if first and second:
            if first != second:
                self.add_error("new_password2", "The two passwords differ.")
            else:
                try:
                    password_validation.validate_password(first, self.user)
                except ValidationError as exc:
                    self.add_error("new_password1", exc)
        return data


class SignupView(AttemptLimitMixin, FormView):
    """Creates an organization and its first admin, unconfirmed, and mails the confirmation link; for an address that
    has an account, mails its owner instead. The answer is the same page either way (and the password is hashed
    either way), so sign-up never tells whether an address is registered. Nobody is logged in here: the link does."""

    attempt_scope = "signup"

    template_name = "dashboard/auth/signup.html"
    form_class = SignupForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            return redirect("dashboard:home")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form):
        data = form.cleaned_data
        if not AccountBrake("signup-mail", data["email"]).allow(5, 3600):
            return redirect("dashboard:signup-sent")  # a mailbox gets at most 5 sign-up mails an hour; same page
        try:
            # Always a brand-new user: a taken address is a Conflict, never a login as the account that has it.
            with transaction.atomic():
                _org, user = services.organization_signup(
                    name=data["organization_name"], email=data["email"], password=data["password"]
                )
        except Conflict:
            existing = User.objects.filter(username=data["email"]).first()
            if existing is not None:
                verification_mail.send_account_exists(existing)
        except ValidationFailed as exc:
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        else:
            verification_mail.send_confirmation(user)
        return redirect("dashboard:signup-sent")


class SignupSentView(TemplateView):
    template_name = "dashboard/auth/signup_sent.html"


class VerifyEmailView(AttemptLimitMixin, FormView):
    """The confirmation link's page, in two steps, neither taken by a script:

    1. the code (put in the field from the link's fragment by dashboard.js, which never posts it, or typed from
       the mail) is checked and the page names the address it confirms; nothing changes yet;
    2. a click on the button that names that address confirms it and logs its account in. An account never
       confirmed before gets its password chosen here (orgs.services.account_confirm: the sign-up that made it
       proves nothing about the mailbox, so its other sessions end and its keys are revoked).

    So a link someone else sends cannot log a visitor into the sender's account without the visitor reading the
    address and choosing to (login CSRF), and a signed-in user is never switched: opening another account's link
    is told, and changes nothing."""

    attempt_scope = "verify-email"
    template_name = "dashboard/auth/verify_email.html"
    form_class = VerifyEmailForm

    def form_valid(self, form):
        code = form.cleaned_data["code"]
        try:
            user = verification.check(code=code)
        except verification.VerificationInvalid as exc:
            form.add_error("code", exc.message)
            return self.form_invalid(form)
        signed_in = self.request.user
        if signed_in.is_authenticated and signed_in.pk != user.pk:
            return render(self.request, "dashboard/auth/verify_email_other.html",
                          {"email": user.email, "signed_in_as": signed_in.email or signed_in.username}, status=409)
        choose_password = verification.never_verified(user)
        if "confirm" not in self.request.POST:
            confirm = ConfirmAccountForm(initial={"code": code}, user=user, choose_password=choose_password)
            return self._confirm_page(confirm, user)
        confirm = ConfirmAccountForm(self.request.POST, user=user, choose_password=choose_password)
        if not confirm.is_valid():
            return self._confirm_page(confirm, user)
        try:
            user, password_set = services.account_confirm(code=code, password=confirm.cleaned_data.get("new_password1"))
        except verification.VerificationInvalid as exc:  # spent meanwhile (a second tab)
            form.add_error("code", exc.message)
            return self.form_invalid(form)
        if signed_in.is_authenticated:
            if password_set:
                update_session_auth_hash(self.request, user)  # this session stays; every other one ended
        else:
            login(self.request, user, backend="django.contrib.auth.backends.ModelBackend")
        resolve_membership(self.request)
        messages.success(self.request, f"Thank you: {user.email} is confirmed.")
        return redirect("dashboard:home")

    def _confirm_page(self, confirm, user):
        return render(self.request, "dashboard/auth/verify_email_confirm.html", {
            "form": confirm, "email": user.email or user.username,
            "choose_password": "new_password1" in confirm.fields,
        })


class SendConfirmationView(LoginRequiredMixin, View):
    """A new confirmation link for the signed-in account (Settings → Members offers it while unconfirmed)."""

    def post(self, request):
        user = request.user
        if verification.is_verified(user):
            messages.success(request, f"{user.email} is already confirmed.")
        elif AccountBrake.for_user("signup-mail", user).allow(5, 3600):
            verification_mail.send_confirmation(user)
            messages.success(request, f"We sent a new confirmation link to {user.email}.")
        else:
            messages.error(request, "We sent several links within the hour already: check your inbox.")
        return redirect("dashboard:members")


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
        user = form.get_user()
        membership = resolve_membership(self.request)
        services.account_audit(action="auth.signed_in", email=user.email or user.username, user=user,
                               org=membership.organization if membership else None)
        return response

    def form_invalid(self, form):
        failures = self.brake.failed()
        if failures >= AccountBrake.FREE_FAILURES and self.brake.user_id and self.brake.first_notice():
            owner = User.objects.filter(pk=self.brake.user_id, is_active=True).first()
            if owner is not None:
                notify_account_locked(user=owner, failures=failures, window=int(time.time()))
        if tried := self.request.POST.get("username", "").strip():  # the address tried; never the password
            services.account_audit(action="auth.sign_in_failed", email=tried)
        return super().form_invalid(form)


class LogoutView(auth_views.LogoutView):
    """POST only (Django's LogoutView refuses GET), so a link or an image cannot log anyone out."""

    next_page = reverse_lazy("dashboard:login")

    def post(self, request, *args, **kwargs):
        user = request.user
        if user.is_authenticated:
            membership = resolve_membership(request)  # the organization this session signs out of
            services.account_audit(action="auth.signed_out", email=user.email or user.username, user=user,
                                   org=membership.organization if membership else None)
        return super().post(request, *args, **kwargs)


# Password reset: Django's own views, in the dashboard's auth layout, but the mail goes through the notifications
# outbox (PasswordResetView.form_valid). The e-mailed link is built on DASHBOARD_URL (not the request's Host header),
# and the "check your inbox" page is the same whether or not the address has an account.


class PasswordResetView(AttemptLimitMixin, auth_views.PasswordResetView):
    """Braked per client address, and per address asked for: a mailbox gets at most 5 reset mails an hour,
    however many clients ask (the answer page stays the same)."""

    attempt_scope = "password-reset"
    attempt_limit = 5

    def form_valid(self, form):
        """Never mails from here: the reset mail goes through the notifications outbox, queued the same way for
        any address (one audit entry, one outbox row, one task), and the worker finds the account and makes the
        link, or drops the row (notifications.sender). So neither the answer nor its time says whether the
        address has an account."""
        email = login_username(form.cleaned_data.get("email", ""))
        if not AccountBrake("password-reset", email).allow(5, 3600):
            return redirect(self.get_success_url())  # the same page as a sent reset: nothing is revealed
        with transaction.atomic():
            services.account_audit(action="auth.password_reset_requested", email=email)
            notify_password_reset(email=email)
        return redirect(self.get_success_url())
    template_name = "dashboard/auth/password_reset.html"
    form_class = PasswordResetForm
    success_url = reverse_lazy("dashboard:password-reset-done")


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "dashboard/auth/password_reset_done.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """A password set through a reset link clears the account's log-in brake: whoever holds the mailbox is the owner,
    so failures of others cannot keep the owner out for good."""

    template_name = "dashboard/auth/password_reset_confirm.html"
    form_class = SetPasswordForm
    success_url = reverse_lazy("dashboard:password-reset-complete")

    def form_valid(self, form):
        response = super().form_valid(form)
        AccountBrake.for_user("login", form.user).succeeded()
        services.account_mailbox_proven(user=form.user)  # the reset link reached the mailbox: the address is theirs
        user = form.user
        services.account_audit(action="auth.password_reset_completed", email=user.email or user.username, user=user)
        return response


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "dashboard/auth/password_reset_complete.html"
