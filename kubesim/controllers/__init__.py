"""Controllers of kubesim; :mod:`kubesim.controllers.registry` lists the built-in ones.

Each is a :class:`Controller` subclass (``controllers/base.py``); the package itself only names
the base classes, so that importing one controller module never imports all the others.
"""

from kubesim.controllers.base import Controller, ControllerRegistry, Event, Manager, Ref, ref_of

__all__ = ["Controller", "ControllerRegistry", "Event", "Manager", "Ref", "ref_of"]
