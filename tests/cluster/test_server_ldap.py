"""server deploy_ldap / undeploy_ldap on kubesim (OpenShift profile): N users in an OpenLDAP server, its identity
provider in the OAuth 'cluster' (the other providers kept, the authentication operator rolling it out), the
passwords only in Secrets; undeploy removes the provider, its bind Secret and the server; the OCM/ROSA paths and
a properties file without the passwords are one line."""

import base64
import os

from conftest import read

PASSWORD = "Ld4p-users-%s" % os.urandom(4).hex()
ADMIN = "Ld4p-admin-%s" % os.urandom(4).hex()


def providers(kube):
    return kube.get("OAuth", "cluster", api_version="config.openshift.io/v1")["spec"].get("identityProviders") or []


def test_ldap_users_and_their_identity_provider_come_and_go(toolbox, kube, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "ldap.properties").write_text("user_password=%s\nadmin_password=%s\n" % (PASSWORD, ADMIN))
    env = {"PERFSCALE_SECRETS_DIR": str(secrets)}
    args = {"idp_name": "perf-ldap", "username_prefix": "user", "username_count": 3,
            "secret_properties_file": "secret:ldap.properties", "wait": True, "delay": 1, "timeout": 300}
    run = toolbox("server deploy_ldap", args, tmp_path / "deploy", env=env)
    assert run.returncode == 0, run.output
    assert read(run.command_dir, "users.json") == ["user0", "user1", "user2"]
    ldap = [p for p in providers(kube) if p["name"] == "perf-ldap"]
    assert len(ldap) == 1 and ldap[0]["type"] == "LDAP"
    assert ldap[0]["ldap"]["url"] == "ldap://openldap.openldap.svc:1389/ou=users,dc=example,dc=org?uid"
    assert ldap[0]["ldap"]["bindPassword"] == {"name": "perf-ldap-bind-password"}
    bind = kube.get("Secret", "perf-ldap-bind-password", "openshift-config", api_version="v1")
    assert base64.b64decode(bind["data"]["bindPassword"]).decode() == ADMIN
    server = kube.get("Secret", "openldap-secret", "openldap", api_version="v1")
    assert base64.b64decode(server["data"]["user_passwords"]).decode() == ",".join([PASSWORD] * 3)
    deployment = kube.get("Deployment", "openldap", "openldap", api_version="apps/v1")
    assert deployment["status"]["availableReplicas"] == 1
    env_vars = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env_vars["LDAP_USERS"] == "user0,user1,user2"
    # deployed again: still one provider of that name
    again = toolbox("server deploy_ldap", dict(args, wait=False), tmp_path / "again", env=env)
    assert again.returncode == 0, again.output
    assert [p["name"] for p in providers(kube)].count("perf-ldap") == 1

    undeploy = toolbox("server undeploy_ldap", {"idp_name": "perf-ldap"}, tmp_path / "undeploy")
    assert undeploy.returncode == 0, undeploy.output
    assert all(p["name"] != "perf-ldap" for p in providers(kube))
    assert kube.get("Secret", "perf-ldap-bind-password", "openshift-config", api_version="v1") in (None, [])
    assert kube.get("Namespace", "openldap", api_version="v1") in (None, [])

    for done in (run, again, undeploy):
        assert PASSWORD not in done.output and ADMIN not in done.output
    for root, _dirs, files in os.walk(tmp_path):
        if root.startswith(str(secrets)):
            continue
        for name in files:
            with open(os.path.join(root, name), "rb") as handle:
                content = handle.read()
            assert PASSWORD.encode() not in content and ADMIN.encode() not in content, os.path.join(root, name)


def test_cloud_account_paths_and_missing_passwords_are_one_line(toolbox, tmp_path):
    properties = tmp_path / "ldap.properties"
    properties.write_text("user_password=x\n")
    args = {"idp_name": "x", "username_prefix": "user", "username_count": 1, "secret_properties_file": str(properties)}
    ocm = toolbox("server deploy_ldap", dict(args, use_ocm=True), tmp_path / "a")
    assert ocm.returncode != 0 and "OCM/ROSA cloud account, which this collection does not drive" in read(
        ocm.command_dir, "FAILURE")
    missing = toolbox("server deploy_ldap", args, tmp_path / "b")
    assert missing.returncode != 0 and "expected the lines user_password=... (the users' password) and admin_password" \
        in " ".join(read(missing.command_dir, "FAILURE").split())
    rosa = toolbox("server undeploy_ldap", {"idp_name": "x", "use_rosa": True}, tmp_path / "c")
    assert rosa.returncode != 0 and "cloud account" in read(rosa.command_dir, "FAILURE")
