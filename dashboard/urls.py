"""The dashboard's URLs, included at the root (voiceagent/urls.py), and the meetings pages' (`meetings`, below)."""

from django.urls import path

from .pages import (
    alerts,
    analytics,
    api_keys,
    audit_log,
    auth,
    bookings,
    calendars,
    call_fields,
    calls,
    contacts,
    escalation_rules,
    events,
    inbox,
    knowledge,
    locations,
    meetings,
    membership,
    notifications,
    organization,
    overview,
    privacy,
    team,
    webhooks,
)

app_name = "dashboard"

urlpatterns = [
    path("", overview.OverviewView.as_view(), name="home"),
    path("signup/", auth.SignupView.as_view(), name="signup"),
    path("signup/sent/", auth.SignupSentView.as_view(), name="signup-sent"),
    path("verify-email/", auth.VerifyEmailView.as_view(), name="verify-email"),
    path("verify-email/send/", auth.SendConfirmationView.as_view(), name="verify-email-send"),
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("password-reset/", auth.PasswordResetView.as_view(), name="password-reset"),
    path("password-reset/sent/", auth.PasswordResetDoneView.as_view(), name="password-reset-done"),
    path(
        "password-reset/<uidb64>/<token>/", auth.PasswordResetConfirmView.as_view(), name="password-reset-confirm"
    ),
    path("password-reset/done/", auth.PasswordResetCompleteView.as_view(), name="password-reset-complete"),
    path("org/switch/", organization.OrgSwitchView.as_view(), name="org-switch"),
    path("settings/", organization.OrganizationSettingsView.as_view(), name="settings-organization"),
    path("settings/privacy/redaction/", privacy.RedactionSettingsView.as_view(), name="settings-redaction"),
    path("settings/api-keys/", api_keys.ApiKeyListView.as_view(), name="api-keys"),
    # Settings → Data & privacy (dashboard/pages/privacy.py).
    path("settings/privacy/", privacy.PrivacySettingsView.as_view(), name="settings-privacy"),
    path("settings/privacy/retention/", privacy.RetentionSaveView.as_view(), name="settings-privacy-retention"),
    path("settings/privacy/erasures/", privacy.ErasureCreateView.as_view(), name="settings-privacy-erasure"),
    path("settings/privacy/suppressions/<uuid:suppression_id>/delete/", privacy.SuppressionDeleteView.as_view(),
         name="settings-privacy-suppression-delete"),
    path("settings/api-keys/new/", api_keys.ApiKeyCreateView.as_view(), name="api-key-create"),
    path("settings/api-keys/created/", api_keys.ApiKeyCreatedView.as_view(), name="api-key-created"),
    path("settings/api-keys/<uuid:key_id>/revoke/", api_keys.ApiKeyRevokeView.as_view(), name="api-key-revoke"),
    path("settings/members/", membership.MembersView.as_view(), name="members"),
    path("settings/members/<int:membership_id>/role/", membership.MemberRoleView.as_view(), name="member-role"),
    path("settings/members/<int:membership_id>/remove/", membership.MemberRemoveView.as_view(), name="member-remove"),
    path("settings/members/leave/", membership.LeaveView.as_view(), name="member-leave"),
    path(
        "settings/invitations/<uuid:invitation_id>/resend/", membership.InvitationResendView.as_view(),
        name="invitation-resend",
    ),
    path(
        "settings/invitations/<uuid:invitation_id>/revoke/", membership.InvitationRevokeView.as_view(),
        name="invitation-revoke",
    ),
    path("invitations/<uuid:invitation_id>/<str:token>/", membership.InvitationAcceptView.as_view(),
         name="invitation-accept"),
    path("organizations/create/", membership.OrganizationCreateView.as_view(), name="organization-create"),
    # Calls and inbox (dashboard/pages/). `calls/<id>` without a slash: it is the `call_url` of `call.ended`.
    path("calls/", calls.CallListView.as_view(), name="calls"),
    path("analytics/", analytics.AnalyticsView.as_view(), name="analytics"),
    path("calls/export.csv", calls.CallExportView.as_view(), name="calls-export"),
    path("calls/<uuid:call_id>", calls.CallDetailView.as_view(), name="call"),
    path("calls/<uuid:call_id>/order-status", calls.OrderStatusView.as_view(), name="call-order-status"),
    path("calls/<uuid:call_id>/delete/<str:part>/", calls.CallContentDeleteView.as_view(), name="call-delete-content"),
    path("inbox/", inbox.InboxView.as_view(), name="inbox"),
    path("alerts/", alerts.AlertsView.as_view(), name="alerts"),
    path("alerts/<uuid:alert_id>/", alerts.AlertDetailView.as_view(), name="alert"),
    path("alerts/<uuid:alert_id>/acknowledge", alerts.AlertAcknowledgeView.as_view(), name="alert-acknowledge"),
    path("inbox/<str:kind>/export.csv", inbox.InboxExportView.as_view(), name="inbox-export"),
    path("inbox/<str:kind>/<uuid:item_id>/handled", inbox.MarkHandledView.as_view(), name="inbox-handled"),
    # Contacts, knowledge base, locations, team (dashboard/pages/).
    path("contacts/", contacts.ContactListView.as_view(), name="contacts"),
    path("contacts/export.csv", contacts.ContactExportView.as_view(), name="contacts-export"),
    path("contacts/new/", contacts.ContactCreateView.as_view(), name="contact-create"),
    path("contacts/<uuid:contact_id>/", contacts.ContactDetailView.as_view(), name="contact-detail"),
    path("contacts/<uuid:contact_id>/edit/", contacts.ContactEditView.as_view(), name="contact-edit"),
    path("knowledge/", knowledge.KnowledgeView.as_view(), name="knowledge"),
    path("knowledge/new/", knowledge.FactCreateView.as_view(), name="knowledge-fact-create"),
    path("knowledge/unanswered/", knowledge.UnansweredQuestionsView.as_view(), name="unanswered"),
    path("knowledge/<uuid:fact_id>/edit/", knowledge.FactEditView.as_view(), name="knowledge-fact-edit"),
    path("knowledge/<uuid:fact_id>/delete/", knowledge.FactDeleteView.as_view(), name="knowledge-fact-delete"),
    path("locations/", locations.LocationListView.as_view(), name="locations"),
    path("locations/new/", locations.LocationCreateView.as_view(), name="location-create"),
    path("locations/<uuid:location_id>/edit/", locations.LocationEditView.as_view(), name="location-edit"),
    path("locations/<uuid:location_id>/delete/", locations.LocationDeleteView.as_view(), name="location-delete"),
    path("team/", team.TeamListView.as_view(), name="team"),
    path("team/new/", team.TeamMemberCreateView.as_view(), name="team-member-create"),
    path("team/<uuid:member_id>/edit/", team.TeamMemberEditView.as_view(), name="team-member-edit"),
    path("team/<uuid:member_id>/delete/", team.TeamMemberDeleteView.as_view(), name="team-member-delete"),
    # Settings → Escalation rules (dashboard/pages/escalation_rules.py).
    path("settings/escalation-rules/", escalation_rules.EscalationRuleListView.as_view(), name="escalation-rules"),
    path("settings/escalation-rules/new/", escalation_rules.EscalationRuleCreateView.as_view(),
         name="escalation-rule-create"),
    path("settings/escalation-rules/<uuid:rule_id>/edit/", escalation_rules.EscalationRuleEditView.as_view(),
         name="escalation-rule-edit"),
    path("settings/escalation-rules/<uuid:rule_id>/enabled/", escalation_rules.EscalationRuleEnabledView.as_view(),
         name="escalation-rule-enabled"),
    path("settings/escalation-rules/<uuid:rule_id>/delete/", escalation_rules.EscalationRuleDeleteView.as_view(),
         name="escalation-rule-delete"),
    # Settings → Call fields (dashboard/pages/call_fields.py).
    path("settings/call-fields/", call_fields.CallFieldListView.as_view(), name="settings-call-fields"),
    path("settings/call-fields/new/", call_fields.CallFieldCreateView.as_view(), name="settings-call-field-create"),
    path("settings/call-fields/<uuid:field_id>/edit/", call_fields.CallFieldEditView.as_view(),
         name="settings-call-field-edit"),
    path("settings/call-fields/<uuid:field_id>/delete/", call_fields.CallFieldDeleteView.as_view(),
         name="settings-call-field-delete"),
    # Settings → Calendars, and the bookings made into them (dashboard/pages/calendars.py, bookings.py).
    path("settings/calendars/", calendars.CalendarListView.as_view(), name="calendars"),
    path("settings/calendars/new/", calendars.CalendarCreateView.as_view(), name="calendar-create"),
    path("settings/calendars/<uuid:calendar_id>/edit/", calendars.CalendarEditView.as_view(), name="calendar-edit"),
    path("settings/calendars/<uuid:calendar_id>/delete/", calendars.CalendarDeleteView.as_view(),
         name="calendar-delete"),
    path("bookings/", bookings.BookingListView.as_view(), name="bookings"),
    path("bookings/export.csv", bookings.BookingExportView.as_view(), name="bookings-export"),
    path("bookings/<uuid:booking_id>/cancel", bookings.BookingCancelView.as_view(), name="booking-cancel"),
    # Settings → Notifications (dashboard/pages/notifications.py).
    path("settings/notifications/", notifications.NotificationsView.as_view(), name="notifications"),
    path(
        "settings/notifications/<uuid:recipient_id>/edit/", notifications.RecipientEditView.as_view(),
        name="notification-recipient-edit",
    ),
    path(
        "settings/notifications/<uuid:recipient_id>/delete/", notifications.RecipientDeleteView.as_view(),
        name="notification-recipient-delete",
    ),
    # Settings → Webhooks.
    path("settings/webhooks/", webhooks.WebhookListView.as_view(), name="webhooks"),
    path("settings/webhooks/new/", webhooks.WebhookCreateView.as_view(), name="webhook-create"),
    path("settings/webhooks/secret/", webhooks.WebhookSecretView.as_view(), name="webhook-secret"),
    path("settings/webhooks/<uuid:subscription_id>/", webhooks.WebhookDetailView.as_view(), name="webhook-detail"),
    path("settings/webhooks/<uuid:subscription_id>/edit/", webhooks.WebhookEditView.as_view(), name="webhook-edit"),
    path(
        "settings/webhooks/<uuid:subscription_id>/enabled/", webhooks.WebhookEnabledView.as_view(),
        name="webhook-enabled",
    ),
    path(
        "settings/webhooks/<uuid:subscription_id>/rotate/", webhooks.WebhookRotateView.as_view(), name="webhook-rotate"
    ),
    path(
        "settings/webhooks/<uuid:subscription_id>/delete/", webhooks.WebhookDeleteView.as_view(), name="webhook-delete"
    ),
    path(
        "settings/webhooks/<uuid:subscription_id>/deliveries/<uuid:delivery_id>/redeliver/",
        webhooks.WebhookRedeliverView.as_view(),
        name="webhook-redeliver",
    ),
    path("settings/webhooks/<uuid:subscription_id>/test/", webhooks.WebhookTestView.as_view(), name="webhook-test"),
    path(
        "settings/webhooks/<uuid:subscription_id>/replay/", webhooks.WebhookReplayView.as_view(), name="webhook-replay"
    ),
    path("events/", events.EventListView.as_view(), name="events"),
    path("settings/audit-log/", audit_log.AuditLogView.as_view(), name="audit-log"),
    path("settings/audit-log/export.csv", audit_log.AuditExportView.as_view(), name="audit-log-export"),
]

# The meetings product's pages, mounted at /meetings/ in their own `meetings` namespace (`meetings:detail`, ...).
# A meeting's page is `/meetings/{id}` without a trailing slash: the event's `meeting_url` points at it exactly.
meetings_urls = (
    [
        path("", meetings.MeetingListView.as_view(), name="list"),
        path("<uuid:meeting_id>", meetings.MeetingDetailView.as_view(), name="detail"),
        path("<uuid:meeting_id>/edit", meetings.OutcomeEditView.as_view(), name="edit"),
        path("<uuid:meeting_id>/approve", meetings.OutcomeApproveView.as_view(), name="approve"),
        path("<uuid:meeting_id>/dispatch", meetings.OutcomeDispatchView.as_view(), name="dispatch"),
        path("<uuid:meeting_id>/dispatches", meetings.DispatchProgressView.as_view(), name="dispatches"),
    ],
    "meetings",
)
