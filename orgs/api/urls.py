from django.urls import path

from . import redaction, views

urlpatterns = [
    path("me", views.MeView.as_view(), name="me"),
    path("privacy/redaction", redaction.RedactionPolicyView.as_view(), name="privacy-redaction"),
]
