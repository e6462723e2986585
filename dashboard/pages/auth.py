"""Signing up, logging in and out, and resetting a password: Django's auth views in the dashboard's layout, braked
per client address and per account (attempts.py)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import get_user_model, login, password_validation
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db import transaction
from django.shortcuts import redirect
from django.urls import reverse_lazy
from django.views import View
from django.views.generic import FormView, TemplateView

from core.errors import Conflict, ValidationFailed
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

    def clean_username(self):
        return login_username(self.cleaned_data.get("username"))


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
                org, user = services.organization_signup(
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
            verification_mail.send_confirmation(user, org_name=org.name)
        return redirect("dashboard:signup-sent")


class SignupSentView(TemplateView):
    template_name = "dashboard/auth/signup_sent.html"


class VerifyEmailView(AttemptLimitMixin, FormView):
    """The confirmation link's page: the code comes in the fragment (dashboard.js posts it) or typed from the mail.
    A valid code confirms the address and logs its account in (whoever holds the mailbox could reset the password
    anyway); any other is one answer on the form."""

    attempt_scope = "verify-email"
    template_name = "dashboard/auth/verify_email.html"
    form_class = VerifyEmailForm

    def form_valid(self, form):
        try:
            user = verification.verify(code=form.cleaned_data["code"])
        except verification.VerificationInvalid as exc:
            form.add_error("code", exc.message)
            return self.form_invalid(form)
        login(self.request, user, backend="django.contrib.auth.backends.ModelBackend")
        resolve_membership(self.request)
        messages.success(self.request, f"Thank you: {user.email} is confirmed.")
        return redirect("dashboard:home")


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
        services.account_audit(action="auth.signed_in", email=user.email or user.username, user=user)
        resolve_membership(self.request)
        return response

    def form_invalid(self, form):
        self.brake.failed()
        if tried := self.request.POST.get("username", "").strip():  # the address tried; never the password
            services.account_audit(action="auth.sign_in_failed", email=tried)
        return super().form_invalid(form)


class LogoutView(auth_views.LogoutView):
    """POST only (Django's LogoutView refuses GET), so a link or an image cannot log anyone out."""

    next_page = reverse_lazy("dashboard:login")

    def post(self, request, *args, **kwargs):
        user = request.user
        if user.is_authenticated:
            services.account_audit(action="auth.signed_out", email=user.email or user.username, user=user)
        return super().post(request, *args, **kwargs)


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
        services.account_audit(action="auth.password_reset_requested", email=form.cleaned_data.get("email", ""))
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
    """A password set through a reset link clears the account's log-in brake: whoever holds the mailbox is the owner,
    so failures of others cannot keep the owner out for good."""

    template_name = "dashboard/auth/password_reset_confirm.html"
    form_class = SetPasswordForm
    success_url = reverse_lazy("dashboard:password-reset-complete")

    def form_valid(self, form):
        response = super().form_valid(form)
        AccountBrake.for_user("login", form.user).succeeded()
        verification.mark_verified(user=form.user)  # the reset link reached the mailbox: the address is theirs
        user = form.user
        services.account_audit(action="auth.password_reset_completed", email=user.email or user.username, user=user)
        return response


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "dashboard/auth/password_reset_complete.html"
