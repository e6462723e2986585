from django.urls import path

from . import views

app_name = "dashboard"

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("signup/", views.SignupView.as_view(), name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("org/switch/", views.OrgSwitchView.as_view(), name="org-switch"),
    path("settings/", views.OrganizationSettingsView.as_view(), name="settings-organization"),
    path("settings/api-keys/", views.ApiKeyListView.as_view(), name="api-keys"),
    path("settings/api-keys/new/", views.ApiKeyCreateView.as_view(), name="api-key-create"),
    path("settings/api-keys/created/", views.ApiKeyCreatedView.as_view(), name="api-key-created"),
    path("settings/api-keys/<uuid:key_id>/revoke/", views.ApiKeyRevokeView.as_view(), name="api-key-revoke"),
    path("settings/members/", views.MembersView.as_view(), name="members"),
    path("settings/members/<int:membership_id>/role/", views.MemberRoleView.as_view(), name="member-role"),
]
