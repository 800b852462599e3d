# ruff: noqa  (vulnerable on purpose: a fixture the scan tests read)
from django.urls import path

from . import views

urlpatterns = [
    path(name.replace("_", "-") + "/", getattr(views, name))
    for name in dir(views)
    if not name.startswith("_")
]
