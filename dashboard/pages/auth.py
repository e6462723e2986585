"""Signing up, logging in and out, and resetting a password: Django's auth views in the dashboard's layout, braked
per client address and per account (attempts.py)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import get_user_model, login, password_validation
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.shortcuts import redirect
from django.urls import reverse_lazy
from django.views.generic import FormView

from orgs import services

from ..attempts import AccountBrake, AttemptLimitMixin, login_username, too_many
from ..forms import DashboardForm, DashboardFormMixin
from ..mixins import remember_org, resolve_membership

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
    """A password set through a reset link clears the account's log-in brake: whoever holds the mailbox is the owner,
    so failures of others cannot keep the owner out for good."""

    template_name = "dashboard/auth/password_reset_confirm.html"
    form_class = SetPasswordForm
    success_url = reverse_lazy("dashboard:password-reset-complete")

    def form_valid(self, form):
        response = super().form_valid(form)
        AccountBrake.for_user("login", form.user).succeeded()
        return response


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "dashboard/auth/password_reset_complete.html"
