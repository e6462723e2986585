from django.urls import path

from . import events, views

urlpatterns = [
    path("webhook-subscriptions", views.SubscriptionListView.as_view(), name="webhook-subscriptions"),
    path("webhook-subscriptions/<str:pk>", views.SubscriptionDetailView.as_view(), name="webhook-subscription"),
    path(
        "webhook-subscriptions/<str:pk>/rotate-secret",
        views.RotateSecretView.as_view(),
        name="webhook-subscription-rotate-secret",
    ),
    path(
        "webhook-subscriptions/<str:pk>/deliveries",
        views.DeliveryListView.as_view(),
        name="webhook-subscription-deliveries",
    ),
    path("webhook-subscriptions/<str:pk>/stats", views.StatsView.as_view(), name="webhook-subscription-stats"),
    path(
        "webhook-subscriptions/<str:pk>/reconciliation",
        views.ReconciliationView.as_view(),
        name="webhook-subscription-reconciliation",
    ),
    path(
        "webhook-subscriptions/<str:pk>/deliveries/<str:delivery_id>/retry",
        views.DeliveryRetryView.as_view(),
        name="webhook-delivery-retry",
    ),
    path("webhook-subscriptions/<str:pk>/recover", views.RecoverView.as_view(), name="webhook-subscription-recover"),
    path("webhook-subscriptions/<str:pk>/replay", views.ReplayView.as_view(), name="webhook-subscription-replay"),
    path("webhook-subscriptions/<str:pk>/test", views.TestDeliveryView.as_view(), name="webhook-subscription-test"),
    path("events", events.EventListView.as_view(), name="events"),
    path("events/<str:pk>", events.EventDetailView.as_view(), name="event"),
    path("event-types", events.EventTypeListView.as_view(), name="event-types"),
]
