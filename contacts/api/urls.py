from django.urls import path

from . import views

urlpatterns = [
    path("contacts", views.ContactListView.as_view(), name="contacts"),
    path("exports/contacts.csv", views.ContactExportView.as_view(), name="export-contacts"),
    path("contacts/<str:id>", views.ContactDetailView.as_view(), name="contact"),
]
