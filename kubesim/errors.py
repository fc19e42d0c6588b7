"""API errors as ``Status`` objects (API conventions: "Response Status Kind").

Every failure returns ``kind: Status`` with ``status: Failure``, a
human-readable ``message``, a machine-readable ``reason``, ``details``
(name, group, kind = resource, causes) and the HTTP ``code``, worded as
kube-apiserver words them (k8s.io/apimachinery/pkg/api/errors).
"""


class ApiError(Exception):
    """An API failure: HTTP code, reason, message, details; ``status()`` is the body."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self):
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body

    # -- constructors named after the reasons -------------------------------------------
    @staticmethod
    def _details(resource, name):
        details = {}
        if name:
            details["name"] = name
        if resource is not None:
            if resource.group:
                details["group"] = resource.group
            details["kind"] = resource.plural
        return details

    @classmethod
    def not_found(cls, resource, name):
        return cls(404, "NotFound", '%s "%s" not found' % (resource.group_resource, name), cls._details(resource, name))

    @classmethod
    def not_found_path(cls):
        return cls(404, "NotFound", "the server could not find the requested resource", {})

    @classmethod
    def namespace_not_found(cls, namespace):
        return cls(404, "NotFound", 'namespaces "%s" not found' % namespace, {"name": namespace, "kind": "namespaces"})

    @classmethod
    def already_exists(cls, resource, name):
        return cls(409, "AlreadyExists", '%s "%s" already exists' % (resource.group_resource, name),
                   cls._details(resource, name))

    @classmethod
    def conflict(cls, resource, name, why):
        return cls(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' % (resource.group_resource, name, why),
                   cls._details(resource, name))

    @classmethod
    def stale(cls, resource, name):
        return cls.conflict(resource, name, "the object has been modified; please apply your changes to the latest "
                                            "version and try again")

    @classmethod
    def apply_conflict(cls, resource, name, conflicts):
        """Server-side apply conflicts: one cause per field (reason FieldManagerConflict)."""
        causes = [{"type": "FieldManagerConflict", "message": 'conflict with "%s": %s' % (manager, field), "field": field}
                  for manager, field in conflicts]
        count = len(conflicts)
        listing = "\n".join("- %s" % c["message"] for c in causes)
        message = "Apply failed with %d conflict%s: %s" % (count, "" if count == 1 else "s",
                                                          causes[0]["message"] if count == 1 else "\n" + listing)
        details = cls._details(resource, name)
        details["causes"] = causes
        return cls(409, "Conflict", message, details)

    @classmethod
    def invalid(cls, kind, group, name, causes):
        """422 Invalid: ``causes`` is a list of (reason, field, message)."""
        parts = ["%s: %s" % (field, message) if field else message for _, field, message in causes]
        qualified = "%s.%s" % (kind, group) if group else kind
        text = '%s "%s" is invalid: ' % (qualified, name) + (parts[0] if len(parts) == 1 else "[%s]" % ", ".join(parts))
        details = {"name": name, "kind": kind, "causes": [
            {"reason": reason, "message": message, "field": field} for reason, field, message in causes]}
        if group:
            details["group"] = group
        return cls(422, "Invalid", text, details)

    @classmethod
    def bad_request(cls, message, causes=None):
        details = {"causes": causes} if causes else None
        return cls(400, "BadRequest", message, details)

    @classmethod
    def forbidden(cls, user, verb, resource, namespace, name=None, group=""):
        plural = resource.plural if resource is not None else resource
        group = resource.group if resource is not None else group
        where = 'in the namespace "%s"' % namespace if namespace else "at the cluster scope"
        message = '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s' % (
            resource.group_resource if resource is not None else plural, user, verb, plural, group, where)
        return cls(403, "Forbidden", message, cls._details(resource, name))

    @classmethod
    def unauthorized(cls):
        return cls(401, "Unauthorized", "Unauthorized")

    @classmethod
    def method_not_allowed(cls):
        return cls(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    @classmethod
    def unsupported_media_type(cls, content_type):
        return cls(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media "
                                                "types include: application/json-patch+json, application/merge-patch+json,"
                                                " application/apply-patch+yaml" if content_type else
                   "the body of the request was in an unknown format")

    @classmethod
    def not_acceptable(cls, accepted):
        return cls(406, "NotAcceptable", "only the following media types are accepted: %s" % ", ".join(accepted))

    @classmethod
    def gone(cls, message):
        return cls(410, "Expired", message)

    @classmethod
    def too_many_requests(cls, retry_after):
        return cls(429, "TooManyRequests", "the server has received too many requests and has asked us to try again "
                                           "later (injected fault)",
                   {"retryAfterSeconds": int(retry_after)}, headers={"Retry-After": str(int(retry_after))})

    @classmethod
    def internal(cls, message):
        return cls(500, "InternalError", "Internal error occurred: %s" % message, {"causes": [{"message": message}]})

    @classmethod
    def unavailable(cls, message):
        return cls(503, "ServiceUnavailable", message)

    @classmethod
    def terminating(cls, namespace, resource, name):
        details = cls._details(resource, name)
        return cls(403, "Forbidden", '%s "%s" is forbidden: unable to create new content in namespace %s because it is '
                                     'being terminated' % (resource.group_resource, name, namespace), details)
