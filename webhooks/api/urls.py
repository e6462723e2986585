from django.urls import path

from . import views

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
    path(
        "webhook-subscriptions/<str:pk>/deliveries/<str:delivery_id>/retry",
        views.DeliveryRetryView.as_view(),
        name="webhook-delivery-retry",
    ),
    path("webhook-subscriptions/<str:pk>/recover", views.RecoverView.as_view(), name="webhook-subscription-recover"),
]
