"""Read-mostly admin views of calls for operators; every change goes through calls.services."""

from django.contrib import admin

from .models import Booking, Calendar, Call, CallbackRequest, Escalation, EscalationRule, Message, Order, Recording


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Call)
class CallAdmin(ReadOnlyAdmin):
    list_display = ("id", "organization", "started_at", "status", "classification", "outcome", "score")
    list_filter = ("status", "classification")
    search_fields = ("id", "runtime_call_id", "from_number")
    list_select_related = ("organization",)


@admin.register(Order)
class OrderAdmin(ReadOnlyAdmin):
    list_display = ("call_order_number", "organization", "status", "total_cents", "placed_at", "canceled_by")
    list_filter = ("status",)
    list_select_related = ("organization",)


for model in (Recording, CallbackRequest, Message, Escalation, Booking, EscalationRule, Calendar):
    admin.site.register(model, ReadOnlyAdmin)
