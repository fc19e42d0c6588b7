# -*- coding: utf-8 -*-
# Copyright: perfscale.topsail contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Toolbox command arguments "from config".

``command_args.yml.j2`` is a Jinja template rendered against the effective
configuration (its sections are the template variables). It renders to a
mapping whose keys are ``[prefix/]group command[/suffix]`` and whose values
are the parameters of the toolbox role ``<group>_<command>``::

    host capture_environment:
      gpu: "{{ tests.capture_environment.gpu }}"

    sutest/cluster set_scale:
      name: "{{ clusters.sutest.machineset }}"
      scale: SET_AT_RUNTIME

``command_args(rendered, "cluster", "set_scale", prefix="sutest", extra={"scale": 2})``
returns the parameters, ``extra`` winning. A value still equal to
``SET_AT_RUNTIME`` afterwards is an error.
"""

from __future__ import annotations

import difflib
import json
import os
import re

from ansible_collections.perfscale.topsail.plugins.module_utils.errors import CommandArgsError, ConfigError

PLACEHOLDER = "SET_AT_RUNTIME"
_ENTRY = re.compile(r"^(?:(?P<prefix>[A-Za-z0-9_.-]+)/)?(?P<group>[A-Za-z0-9_]+) (?P<command>[A-Za-z0-9_]+)(?:/(?P<suffix>[A-Za-z0-9_.-]+))?$")


def entry_key(group, command, prefix=None, suffix=None):
    key = "%s %s" % (group, command)
    if prefix:
        key = "%s/%s" % (prefix, key)
    if suffix:
        key = "%s/%s" % (key, suffix)
    return key


def parse_entry_key(key):
    match = _ENTRY.match(key or "")
    if not match:
        raise CommandArgsError(
            "command args entry %r: expected '[prefix/]group command[/suffix]', e.g. 'sutest/cluster set_scale'" % (key,)
        )
    return match.group("prefix"), match.group("group"), match.group("command"), match.group("suffix")


def parse_command(command):
    """'host capture_environment' -> ('host', 'capture_environment')."""
    parts = (command or "").split()
    if len(parts) != 2:
        raise CommandArgsError("toolbox command %r: expected 'group command', e.g. 'host capture_environment'" % (command,))
    return parts[0], parts[1]


def yaml_safe_json(value):
    """JSON text that YAML 1.1 (PyYAML, Ansible) reads back as the same value: a float in exponent
    form gets a mantissa with a dot (``2e-05`` would be read as a string; ``2.0e-05`` is a float)."""
    if isinstance(value, float):
        text = json.dumps(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = "%s.0e%s" % (mantissa, exponent)
        return text
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (json.dumps(str(key)), yaml_safe_json(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return "[%s]" % ", ".join(yaml_safe_json(item) for item in value)
    return json.dumps(value)


def _jinja_environment():
    import jinja2

    def raise_exception(message):
        raise CommandArgsError(str(message))

    def or_env(value, env_key):
        return os.environ.get(env_key) or value

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)  # nosec B701 - renders YAML, not HTML
    env.filters["raise_exception"] = raise_exception
    env.filters["or_env"] = or_env
    env.filters["to_json"] = yaml_safe_json
    return env


def render_command_args(template_text, config, source="command_args.yml.j2"):
    """Render the template against the configuration and parse the YAML result."""
    import jinja2

    from ansible_collections.perfscale.topsail.plugins.module_utils.config.loading import parse_yaml_text

    env = _jinja_environment()
    context = {k: v for k, v in config.items() if isinstance(k, str)}
    try:
        rendered = env.from_string(template_text).render(**context)
    except jinja2.UndefinedError as exc:
        raise CommandArgsError("%s: %s (a config key used by the template is missing)" % (source, exc.message)) from None
    except jinja2.TemplateSyntaxError as exc:
        raise CommandArgsError("%s: line %s: %s" % (source, exc.lineno, exc.message)) from None
    try:
        data = parse_yaml_text(rendered, "%s (rendered)" % source)
    except ConfigError as exc:
        raise CommandArgsError(str(exc)) from None
    data = data or {}
    if not isinstance(data, dict):
        raise CommandArgsError("%s: must render to a mapping of 'group command' entries" % source)
    for key, value in data.items():
        parse_entry_key(key)
        if value is not None and not isinstance(value, dict):
            raise CommandArgsError("%s: entry '%s' must be a mapping of parameters" % (source, key))
    return data


def load_command_args(path, config):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise CommandArgsError("command args template %s: cannot be read: %s" % (path, exc.strerror or exc)) from None
    return render_command_args(text, config, source=path)


def command_args(rendered, group, command, prefix=None, suffix=None, extra=None, known_params=None):
    """Parameters for one command; ``extra`` wins; placeholders left are errors.

    ``known_params``, when given, is the list of parameters the role accepts
    (from its ``meta/argument_specs.yml``): anything else is an error.
    """
    key = entry_key(group, command, prefix, suffix)
    if key not in rendered:
        known = sorted(rendered)
        hint = difflib.get_close_matches(key, known, n=1)
        raise CommandArgsError(
            "command args: no entry '%s'%s; known entries: %s"
            % (key, " (did you mean '%s'?)" % hint[0] if hint else "", ", ".join(known) if known else "(none)")
        )
    params = dict(rendered[key] or {})
    extra = extra or {}
    if not isinstance(extra, dict):
        raise CommandArgsError("command args '%s': extra must be a mapping of parameters" % key)
    params.update(extra)
    if known_params is not None:
        unknown = sorted(set(params) - set(known_params))
        if unknown:
            raise CommandArgsError(
                "command args '%s': unknown parameter(s) %s for role %s_%s; known parameters: %s"
                % (key, ", ".join(unknown), group, command, ", ".join(sorted(known_params)))
            )
    unset = sorted(name for name, value in params.items() if value == PLACEHOLDER)
    if unset:
        raise CommandArgsError(
            "command args '%s': parameter(s) %s still set to %s; pass them with extra" % (key, ", ".join(unset), PLACEHOLDER)
        )
    return params


def role_argument_options(roles_dir, role):
    """Options of a role's ``meta/argument_specs.yml`` (entry point ``main``)."""
    import yaml

    path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
    if not os.path.isdir(os.path.join(roles_dir, role)):
        available = sorted(d for d in os.listdir(roles_dir) if os.path.isdir(os.path.join(roles_dir, d))) if os.path.isdir(roles_dir) else []
        raise CommandArgsError("toolbox role '%s' does not exist; available roles: %s" % (role, ", ".join(available)))
    try:
        with open(path, encoding="utf-8") as handle:
            spec = yaml.safe_load(handle) or {}
    except OSError as exc:
        raise CommandArgsError("role %s: cannot read meta/argument_specs.yml: %s" % (role, exc.strerror or exc)) from None
    return ((spec.get("argument_specs") or {}).get("main") or {}).get("options") or {}


# the reference's parameter names that are not valid lower-case variable names here: alias -> option
# (role argument specs cannot declare aliases, so they live here and in the option's description)
REFERENCE_ALIASES = {
    "gpu_operator_deploy_from_operatorhub_installPlan": "gpu_operator_deploy_from_operatorhub_installplan",
}


def _aliases(options):
    """``{alias variable: option variable}`` for the options of one role."""
    return {alias: name for alias, name in REFERENCE_ALIASES.items() if name in options}


def role_variables(role, params, options):
    """Map unprefixed parameter names to the role-prefixed variables (an alias to its option)."""
    variables = {}
    aliases = _aliases(options or {})
    for name, value in params.items():
        variable = "%s_%s" % (role, name)
        variable = aliases.get(variable, variable)
        if options and variable not in options:
            raise CommandArgsError("role %s has no parameter '%s' (variable %s)" % (role, name, variable))
        variables[variable] = value
    return variables


# keys of a role argument spec's option that describe it for people, not for the validator
_DOC_KEYS = ("description", "version_added", "notes")


def _unprefixed_spec(role, options):
    """The role's options as an argument spec keyed by parameter name (the role prefix dropped)."""
    prefix = role + "_"
    spec = {}
    for name, option in (options or {}).items():
        if not name.startswith(prefix):
            continue
        spec[name[len(prefix):]] = {key: value for key, value in (option or {}).items() if key not in _DOC_KEYS}
    return spec


def missing_required(role, params, options, defined=()):
    """The required parameters of the role not in ``params`` and whose role variable is not in
    ``defined`` (set by the inventory or the play), sorted."""
    spec = _unprefixed_spec(role, options)
    aliases = {alias[len(role) + 1:]: name[len(role) + 1:] for alias, name in _aliases(options or {}).items()}
    given = {aliases.get(name, name) for name in (params or {})}
    return sorted(name for name, option in spec.items() if option.get("required")
                  and name not in given and "%s_%s" % (role, name) not in defined)


def check_parameters(command, role, params, options, defined=(), check_required=True, spelling="-e %s=..."):
    """``params`` (parameter names, unprefixed) checked against the role's argument specs the way a
    user of the reference's ``run_toolbox.py`` expects: an unknown name (with the closest one), a
    value of the wrong type, a required parameter missing (unless its role variable is in
    ``defined``: set by the inventory or the play; not checked without ``check_required``) are one
    line naming the command and the parameter (``spelling``: how the user gives one, for the hint of
    a missing one). Returns the parameters with their values converted to the declared types."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    spec = _unprefixed_spec(role, options)
    aliases = {alias[len(role) + 1:]: name[len(role) + 1:] for alias, name in _aliases(options or {}).items()}
    params = {aliases.get(name, name): value for name, value in (params or {}).items()}
    unknown = sorted(set(params) - set(spec))
    if unknown:
        hint = difflib.get_close_matches(unknown[0], list(spec), n=1)
        raise CommandArgsError("toolbox command '%s': unknown parameter %s%s; its parameters: %s" % (
            command, ", ".join("'%s'" % name for name in unknown), " (did you mean '%s'?)" % hint[0] if hint else "",
            ", ".join(sorted(spec)) or "(none)"))
    missing = missing_required(role, params, options, defined) if check_required else []
    if missing:
        raise CommandArgsError("toolbox command '%s': missing required parameter(s) %s (%s)"
                               % (command, ", ".join(missing), spelling % missing[0]))
    # the type, choices and elements of what was given (required-ness was checked above)
    given_spec = {name: {key: value for key, value in spec[name].items() if key not in ("required", "default")}
                  for name in params}
    result = ArgumentSpecValidator(given_spec).validate(dict(params))
    if result.error_messages:
        raise CommandArgsError("toolbox command '%s': %s" % (command, _parameter_error(result.error_messages[0], params)))
    return {name: result.validated_parameters[name] for name in params}


def _parameter_error(message, params):
    """Ansible's validator message, in the words of a toolbox parameter (one line)."""
    converting = re.match(r"argument '(?P<name>[^']+)' is of type \S+(?: found in '[^']*')? and we were unable to "
                          r"convert to (?P<type>\w+)", message)
    if converting and converting.group("name") in params:
        return "parameter '%s': expected %s, got %r" % (converting.group("name"), converting.group("type"),
                                                        params[converting.group("name")])
    message = re.sub(r"^value of (\w+) must", r"parameter '\1' must", message)
    return " ".join(message.replace("argument '", "parameter '").split())


def known_parameters(role, options):
    prefix = role + "_"
    return sorted(name[len(prefix):] for name in list(options) + list(_aliases(options)) if name.startswith(prefix))


def role_defaults(options):
    """Role-prefixed variables that declare a default, with that default."""
    return {name: spec.get("default") for name, spec in options.items() if isinstance(spec, dict) and "default" in spec}


def prepare_command(roles_dir, command, config, template=None, prefix=None, suffix=None, extra=None, args_only=False,
                    defined=()):
    """What running ``command`` needs: ``role``, ``variables`` (role-prefixed, from the configuration's
    command-arguments entry with ``extra`` on top, or ``extra`` alone with ``args_only``) and
    ``defaults`` (the role's declared defaults, to reset the variables afterwards). The parameters
    are checked with ``check_parameters`` (``defined``: variables already set by the inventory or
    the play count for required parameters)."""
    group, name = parse_command(command)
    role = "%s_%s" % (group, name)
    options = role_argument_options(roles_dir, role)
    key = entry_key(group, name, prefix, suffix)
    rendered = {key: {}} if args_only else load_command_args(template, config)
    params = command_args(rendered, group, name, prefix=prefix, suffix=suffix, extra=extra)
    params = check_parameters("%s %s" % (group, name), role, params, options, defined=defined)
    return {"role": role, "variables": role_variables(role, params, options), "defaults": role_defaults(options)}


def typed_text(command, where, value):
    """A parameter's value as typed on a command line: text starting with ``[`` or ``{`` is a
    JSON/YAML list or mapping (``'[a, b]'``, ``'{key: 1}'``); anything else stays as typed, for the
    role's declared type to convert (``a,b`` is a list of two for a list parameter). ``where``
    names the argument in the error (``-e namespaces``, ``--namespaces``)."""
    import yaml

    if not (isinstance(value, str) and value.strip()[:1] in ("[", "{")):
        return value
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError as exc:
        raise CommandArgsError("toolbox command '%s': %s: expected JSON/YAML text, got %r (%s)"
                               % (command, where, value, str(exc).splitlines()[0])) from None


def parameters_from_extra_vars(command, role, options, extra_vars):
    """The command's parameters given as ``-e name=value`` (the reference's ``--name=value``):
    ``extra_vars`` whose names are parameters of the role. A value typed as JSON/YAML text
    (``-e namespaces='[a, b]'``) is parsed. A name that is not a parameter but close to one
    (``-e namespace=x`` for ``namespaces``) is an error with the closest name; any other name is
    left alone (a variable of the play or of the inventory)."""
    spec = _unprefixed_spec(role, options)
    taken = {}
    for name, value in (extra_vars or {}).items():
        if name in spec:
            taken[name] = typed_text(command, "-e %s" % name, value)
            continue
        hint = difflib.get_close_matches(name, list(spec), n=1, cutoff=0.8)
        if hint:
            raise CommandArgsError("toolbox command '%s': -e %s=...: unknown parameter '%s' (did you mean '%s'?); "
                                   "its parameters: %s" % (command, name, name, hint[0], ", ".join(sorted(spec))))
    return taken
