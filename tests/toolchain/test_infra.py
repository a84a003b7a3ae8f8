"""infra/, azure.yaml and .funcignore, checked as far as this machine allows.

There is no Bicep compiler here (the az CLI downloads it; no package registry ships it) and no Azure
account, so nothing is compiled to ARM JSON, type-checked against the resource providers' schemas,
validated by Azure Resource Manager (`az deployment group validate` / `what-if`) or deployed. What is
checked (tests/bicep_model.py reads the files):

- Syntax: every .bicep file is accepted by two independent parsers, tree-sitter-bicep and pycep-parser.
- What a compiler would also catch: every name used is declared; every module file exists and gets
  every required parameter and no unknown one; every `module.outputs.x` exists; loadJsonContent paths
  exist; parameter types are Bicep types; API versions are dated, not previews.
- Parameter files (test, production, azd's): every name is a parameter of main.bicep, every required
  parameter is set, every value has the parameter's type and meets @allowed/@minValue/@maxValue/
  @minLength/@maxLength; azd's defaults are the test environment; the operator guide's azd production
  settings are the production file's.
- Agreement with the code: Cosmos DB containers come from infra/cosmos/containers.json (loaded, not
  copied); every app setting the deployed code reads is set (or listed as local-only), and every app
  setting set is read by someone; setting defaults equal the code's; queue names equal
  backends.queues.RECONCILE_QUEUE and its poison queue; the route prefix of host.json is the one the README
  and the guides write, and the base URL output's.
- Identity only: no key, listKeys() or connection string with a key anywhere in infra/; shared key and
  local auth disabled on Storage, Cosmos DB and Application Insights; the managed identity holds the
  data roles; no app setting the Flex Consumption plan refuses.
- Packaging: .funcignore ships every file the app imports or reads at run time and none of tests,
  tooling, docs or the rest of infra, read as azd reads it (gitignore rules) and as Core Tools does (a port
  of its GitIgnoreParser: patterns anchored at the root); nested caches and virtual environments stay out.
- Decision 0066: no ftpsState, basic-auth publishing off; Cosmos DB role assignments serialised after the
  containers; every resource name fits its type for any azd environment name (the name expressions are
  evaluated); guards for autoscale steps and always-ready instances; HTTP concurrency, always-ready
  instances, zone redundancy and vnetEnabled as parameters, on in production; private endpoints; diagnostic
  settings; a platform 429 told from the app's in the partner guide and OpenAPI.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pathspec
import pytest
import yaml

from backends.azure_queue import AzureQueue
from backends.cosmos import connection as cosmos_connection
from backends.cosmos import markers
from backends.cosmos import webhooks as cosmos_webhooks
from backends.queues import RECONCILE_QUEUE
from backends.webhook_backend import WEBHOOK_QUEUE
from core import settings as settings_module
from tests import bicep_model
from tests.bicep_model import Expr, Ref
from tests.funcignore import CoreToolsIgnore

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
MAIN = INFRA / "main.bicep"
BICEP_FILES = sorted(INFRA.rglob("*.bicep"))
ENVIRONMENT_FILES = {
    "test": INFRA / "main.test.parameters.json",
    "production": INFRA / "main.production.parameters.json",
}
AZD_PARAMETERS = INFRA / "main.parameters.json"
README = ROOT / "README.md"
OPERATOR_GUIDE = ROOT / "docs" / "operator-guide.md"
PARTNER_GUIDE = ROOT / "docs" / "partner-guide.md"
DOCS_WITH_URLS = [README, PARTNER_GUIDE, OPERATOR_GUIDE, ROOT / "docs" / "developer-guide.md"]

# Settings the code reads that are for one machine only and must not be set in Azure: the local host's
# port, the SQLite backend's folder and demo partner, the emulator's Cosmos DB key, and the storage
# connection string (Azurite); in Azure, AzureWebJobsStorage__* name the account and the identity.
# COSMOS_INJECT_THROTTLING: tests only, refused for an endpoint off this machine (devhost/cosmos_throttling.py).
LOCAL_ONLY_SETTINGS = {
    "PORT",
    "POS_DATA_DIR",
    "POS_CREATE_DEMO_PARTNER",
    "COSMOS_KEY",
    "AzureWebJobsStorage",
    "COSMOS_INJECT_THROTTLING",
    # An account-key connection string for a Blob export destination (Azurite); Azure signs in with Entra ID.
    "EXPORT_STORAGE_CONNECTION",
    # Webhooks to loopback (local development and tests only) and a retry schedule of seconds for tests;
    # Azure uses the defaults (core/webhook_settings.py).
    "WEBHOOK_ALLOW_LOOPBACK",
    "WEBHOOK_RETRY_SECONDS",
}
# Settings the code reads as an alternative to one that is set: backends/azure_queue.py takes the queue
# service URI or, failing that, the account name (set, since the Functions host reads it too).
ALTERNATIVE_SETTINGS = {"AzureWebJobsStorage__queueServiceUri": "AzureWebJobsStorage__accountName"}
# App settings read by the platform or a library rather than by our code.
PLATFORM_SETTINGS = {
    "AzureWebJobsStorage__credential": "Functions host: identity-based AzureWebJobsStorage",
    "AZURE_CLIENT_ID": "azure-identity DefaultAzureCredential: which user-assigned identity",
    "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "Functions host and the Azure Monitor exporter: Entra auth",
}
# App settings the Flex Consumption plan does not accept (runtime and scale live in functionAppConfig).
FLEX_UNSUPPORTED_SETTINGS = {
    "FUNCTIONS_WORKER_RUNTIME",
    "FUNCTIONS_EXTENSION_VERSION",
    "FUNCTIONS_WORKER_RUNTIME_VERSION",
    "FUNCTIONS_MAX_HTTP_CONCURRENCY",
    "FUNCTIONS_WORKER_PROCESS_COUNT",
    "FUNCTIONS_WORKER_DYNAMIC_CONCURRENCY_ENABLED",
    "SCM_DO_BUILD_DURING_DEPLOYMENT",
    "ENABLE_ORYX_BUILD",
    "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING",
    "WEBSITE_CONTENTSHARE",
    "WEBSITE_CONTENTOVERVNET",
    "WEBSITE_RUN_FROM_PACKAGE",
    "WEBSITE_MAX_DYNAMIC_APPLICATION_SCALE_OUT",
    "WEBSITE_NODE_DEFAULT_VERSION",
}
ROLE_IDS = {
    "Cosmos DB Built-in Data Contributor": "00000000-0000-0000-0000-000000000002",
    "Storage Blob Data Owner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "Storage Queue Data Contributor": "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
    "Monitoring Metrics Publisher": "3913510d-42f4-4e42-8a64-420c390055eb",
}
BICEP_TYPES = {"string", "int", "bool", "object", "array"}
# Diagnostic settings have no GA API version with category groups and resource-specific tables; the Azure
# Verified Modules use this one (avm/res/document-db/database-account, avm/res/web/site).
PREVIEW_API_VERSIONS = {"Microsoft.Insights/diagnosticSettings": "2021-05-01-preview"}
# Properties of an ARM Cosmos DB SqlContainerResource (what containers.json entries may hold).
SQL_CONTAINER_RESOURCE_PROPERTIES = {
    "id",
    "partitionKey",
    "indexingPolicy",
    "defaultTtl",
    "uniqueKeyPolicy",
    "conflictResolutionPolicy",
    "analyticalStorageTtl",
    "clientEncryptionPolicy",
    "computedProperties",
    "vectorEmbeddingPolicy",
    "fullTextPolicy",
    "createMode",
    "restoreParameters",
    "materializedViewDefinition",
}


def _model(path: Path = MAIN) -> bicep_model.BicepFile:
    return bicep_model.load(path)


def _module(name: str) -> bicep_model.BicepFile:
    main = _model()
    return _model((MAIN.parent / main.modules[name].path).resolve())


def _app_settings() -> dict:
    return _model().variables["appSettings"]


def _resources_of_type(model: bicep_model.BicepFile, resource_type: str) -> list[bicep_model.Resource]:
    return [resource for resource in model.resources.values() if resource.type == resource_type]


# -- syntax and what a compiler would check ---------------------------------------------------------


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda path: str(path.relative_to(INFRA)))
def test_every_bicep_file_parses_with_both_parsers(path):
    assert bicep_model.syntax_errors(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "broken",
    [
        "param name string = 'unterminated\n",
        "resource r 'Microsoft.Storage/storageAccounts@2023-05-01' = {\n  name:\n}\n",
        "var settings = {\n  a: 1\n",
        "paramm name string\n",
        "output url string = 'a' 'b'\n",
    ],
)
def test_the_syntax_check_reports_errors(broken):
    errors = bicep_model.syntax_errors(broken)
    assert any(error.startswith("tree-sitter-bicep") for error in errors), errors
    assert any(error.startswith("pycep-parser") for error in errors), errors


def test_the_model_reports_undeclared_names(tmp_path):
    source = "param name string\nvar greeting = 'hello ${nme}'\noutput out string = storage.outputs.name\n"
    path = tmp_path / "undeclared.bicep"
    path.write_text(source, encoding="utf-8")
    model = bicep_model.load(path)
    assert [name for _, name in bicep_model.references(model) if name not in model.declared] == ["nme", "storage"]


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda path: str(path.relative_to(INFRA)))
def test_every_name_used_is_declared(path):
    model = _model(path)
    undeclared = [f"line {line}: {name}" for line, name in bicep_model.references(model) if name not in model.declared]
    assert undeclared == []


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda path: str(path.relative_to(INFRA)))
def test_parameter_types_and_api_versions(path):
    model = _model(path)
    assert {name: param.type for name, param in model.params.items() if param.type not in BICEP_TYPES} == {}
    for resource in model.resources.values():
        if resource.type in PREVIEW_API_VERSIONS:
            assert resource.api_version == PREVIEW_API_VERSIONS[resource.type], resource.name
            continue
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", resource.api_version), (resource.name, resource.api_version)


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda path: str(path.relative_to(INFRA)))
def test_modules_exist_and_get_exactly_their_parameters(path):
    model = _model(path)
    for symbol, module in model.modules.items():
        target = (path.parent / module.path).resolve()
        assert target.is_file(), f"{symbol}: {module.path} does not exist"
        declared = _model(target).params
        given = set(module.body.get("params", {}))
        assert given - set(declared) == set(), f"{symbol}: unknown parameters"
        assert {name for name, param in declared.items() if param.required} - given == set(), (
            f"{symbol}: required parameters not given"
        )
        used_outputs = set(re.findall(rf"\b{symbol}\.outputs\.(\w+)", model.source))
        assert used_outputs - set(_model(target).outputs) == set(), f"{symbol}: outputs it does not declare"


@pytest.mark.parametrize("path", BICEP_FILES, ids=lambda path: str(path.relative_to(INFRA)))
def test_loaded_files_exist_and_are_json(path):
    for relative in bicep_model.string_calls(_model(path), "loadJsonContent"):
        json.loads((path.parent / relative).read_text(encoding="utf-8"))


# -- parameter files --------------------------------------------------------------------------------


def _check_value(param: bicep_model.Param, value) -> list[str]:
    python_types = {"string": str, "int": int, "bool": bool, "object": dict, "array": list}
    expected = python_types[param.type]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        return [f"{param.name}: {value!r} is not of type {param.type}"]
    problems = []
    rules = param.decorators
    if "allowed" in rules and value not in rules["allowed"][0]:
        problems.append(f"{param.name}: {value!r} is not one of {rules['allowed'][0]}")
    if "minValue" in rules and value < rules["minValue"][0]:
        problems.append(f"{param.name}: {value} < @minValue({rules['minValue'][0]})")
    if "maxValue" in rules and value > rules["maxValue"][0]:
        problems.append(f"{param.name}: {value} > @maxValue({rules['maxValue'][0]})")
    if "minLength" in rules and len(value) < rules["minLength"][0]:
        problems.append(f"{param.name}: shorter than @minLength({rules['minLength'][0]})")
    if "maxLength" in rules and len(value) > rules["maxLength"][0]:
        problems.append(f"{param.name}: longer than @maxLength({rules['maxLength'][0]})")
    return problems


def _parameter_values(path: Path) -> dict:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["$schema"].endswith("/deploymentParameters.json#")
    return {name: entry["value"] for name, entry in document["parameters"].items()}


AZD_SAMPLE_ENVIRONMENT = {
    "AZURE_ENV_NAME": "pos-test",
    "AZURE_LOCATION": "swedencentral",
    "AZURE_PRINCIPAL_ID": "00000000-0000-0000-0000-00000000abcd",
}


def _azd_substitute(text: str, environment: dict) -> str:
    """azd's `${NAME}` / `${NAME=default}` substitution of main.parameters.json."""

    def value(match):
        name, _, default = match.group(1).partition("=")
        return environment.get(name, default)

    return re.sub(r"\$\{([^}]*)\}", value, text)


def _azd_values(environment: dict) -> dict:
    """azd's parameters with `environment`, converted to the parameters' types as azd does."""
    params = _model().params
    values = {}
    for name, raw in _parameter_values(AZD_PARAMETERS).items():
        text = _azd_substitute(raw, environment)
        values[name] = (
            int(text) if params[name].type == "int" else (text == "true") if params[name].type == "bool" else text
        )
    return values


def _azd_variables() -> dict:
    """Parameter name -> the azd environment variable that sets it."""
    return {
        name: re.fullmatch(r"\$\{(\w+)(=.*)?\}", raw).group(1)
        for name, raw in _parameter_values(AZD_PARAMETERS).items()
    }


@pytest.mark.parametrize("label", ["test", "production", "azd"])
def test_parameter_files_set_every_required_parameter_with_valid_values(label):
    params = _model().params
    values = _azd_values(AZD_SAMPLE_ENVIRONMENT) if label == "azd" else _parameter_values(ENVIRONMENT_FILES[label])
    assert set(values) - set(params) == set(), "parameters main.bicep does not declare"
    assert {name for name, param in params.items() if param.required} - set(values) == set()
    assert [problem for name, value in values.items() for problem in _check_value(params[name], value)] == []


def test_parameter_defaults_of_main_bicep_meet_their_own_rules():
    for param in _model().params.values():
        if not param.required and not isinstance(param.default, (Ref, Expr)):
            assert _check_value(param, param.default) == [], param.name


def test_production_scales_further_than_test():
    test, production = (_parameter_values(path) for path in ENVIRONMENT_FILES.values())
    assert (test["environmentName"], production["environmentName"]) == ("test", "production")
    assert test["cosmosThroughputMode"] == "serverless"
    assert production["cosmosThroughputMode"] == "autoscale"
    assert production["maximumInstanceCount"] > test["maximumInstanceCount"]
    assert production["logRetentionDays"] > test["logRetentionDays"]


def test_azd_defaults_are_the_test_environment_and_every_size_is_an_azd_variable():
    azd = _azd_values({})
    test = _parameter_values(ENVIRONMENT_FILES["test"])
    production = _parameter_values(ENVIRONMENT_FILES["production"])
    sizes = (set(test) | set(production)) - {"environmentName"}
    assert sizes - set(azd) == set(), "settable only outside azd"
    assert {name: azd[name] for name in set(test) - {"environmentName"}} == {
        name: value for name, value in test.items() if name != "environmentName"
    }


def _readme_production_block() -> str:
    """The operator guide's code block that sets up production with azd (after "For production")."""
    after = OPERATOR_GUIDE.read_text(encoding="utf-8").split("For production", 1)[1]
    return after.split("```sh", 1)[1].split("```", 1)[0]


def test_readme_azd_production_settings_are_the_production_file():
    """The operator guide's `azd env set POS_...` lines for production give the production file's values."""
    readme_settings = dict(re.findall(r"azd env set (POS_\w+) (\S+)", _readme_production_block()))
    variables = _azd_variables()
    production = _parameter_values(ENVIRONMENT_FILES["production"])
    azd_defaults = _azd_values({})
    expected = {
        variables[name]: json.dumps(value) if isinstance(value, bool) else str(value)
        for name, value in production.items()
        if name != "environmentName" and azd_defaults.get(name) != value
    }
    assert readme_settings == expected


# -- agreement with the code ------------------------------------------------------------------------


def test_cosmos_containers_are_loaded_from_containers_json_not_copied():
    main = _model()
    loaded = {
        name: value
        for name, value in main.variables.items()
        if isinstance(value, Expr) and re.fullmatch(r"loadJsonContent\('cosmos/containers\.json'\)", value.text)
    }
    assert len(loaded) == 1, "main.bicep must load cosmos/containers.json once"
    variable = next(iter(loaded))
    assert main.modules["cosmos"].body["params"]["containers"] == Ref(f"{variable}.containers")
    assert (INFRA / "cosmos" / "containers.json") == cosmos_connection.CONTAINERS_FILE

    cosmos = _module("cosmos")
    (containers,) = _resources_of_type(cosmos, "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers")
    loop_variable = re.match(r"\[for (\w+) in containers:", containers.loop.text).group(1)
    assert containers.body["name"] == Ref(f"{loop_variable}.id")
    assert containers.body["properties"] == {"resource": Ref(loop_variable)}  # partition key, indexing: the file's

    definitions = cosmos_connection.load_container_definitions()
    names = [definition["id"] for definition in definitions]
    assert names == [
        cosmos_connection.PARTNERS,
        cosmos_webhooks.CONTAINER,
        cosmos_connection.BATCHES,
        cosmos_connection.TRADE_RECORDS,
        cosmos_connection.CLOSES,
    ]
    for definition in definitions:
        assert set(definition) <= SQL_CONTAINER_RESOURCE_PROPERTIES, definition["id"]
        assert definition["partitionKey"]["kind"] == "Hash" and len(definition["partitionKey"]["paths"]) == 1
    for path in BICEP_FILES:  # no second copy of a name or a partition key path in Bicep
        text = path.read_text(encoding="utf-8")
        for literal in names + [definition["partitionKey"]["paths"][0] for definition in definitions]:
            assert f"'{literal}'" not in text, f"{path.name} repeats {literal}"


def test_no_container_expires_items_by_default():
    """Markers, closes (with the batch_ids of every close of their day) and mappings are kept for good:
    no container has a default time-to-live. Where TTL is on (-1), only an item's own `ttl` expires it:
    rate-limit windows and tombstones, markers when BATCH_MARKER_TTL_DAYS opts in, and a store-day's records,
    index entries and trade record batches when TRADE_RECORD_RETENTION_DAYS does."""
    ttl = {
        definition["id"]: definition.get("defaultTtl") for definition in cosmos_connection.load_container_definitions()
    }
    assert all(value in (None, -1) for value in ttl.values()), ttl
    assert ttl[cosmos_connection.BATCHES] == -1  # the opt-in needs TTL on in the container
    assert ttl[cosmos_connection.TRADE_RECORDS] == -1  # so does retention
    assert ttl[cosmos_connection.CLOSES] is None  # nothing there ever expires, whatever an item says
    assert _model().params["batchMarkerTtlDays"].default == markers.DEFAULT_MARKER_TTL_DAYS == 0


def test_cosmos_database_and_throughput_modes():
    main = _model()
    assert main.variables["cosmosDatabaseName"] == "pos"
    assert main.modules["cosmos"].body["params"]["databaseName"] == Ref("cosmosDatabaseName")
    assert _app_settings()["COSMOS_DATABASE"] == Ref("cosmosDatabaseName")
    assert _code_defaults().cosmos_database == "pos"
    cosmos = _module("cosmos")
    assert (
        cosmos.params["throughputMode"].decorators["allowed"][0]
        == main.params["cosmosThroughputMode"].decorators["allowed"][0]
        == ["serverless", "autoscale"]
    )
    assert "EnableServerless" in cosmos.source and "autoscaleSettings" in cosmos.source


def _code_defaults() -> settings_module.Settings:
    """The code's settings with none set in the environment."""
    saved = dict(os.environ)
    try:
        os.environ.clear()
        return settings_module.Settings.from_env()
    finally:
        os.environ.update(saved)


def _python_files_deployed() -> list[Path]:
    return [ROOT / relative for relative in _deployed_files() if relative.endswith(".py")]


def _constant(node, constants: dict) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(part.value)
            elif (
                isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.value.id in constants
            ):
                parts.append(constants[part.value.id])
            else:
                return None
        return "".join(parts)
    return None


def _is_environ(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def settings_read_by_code() -> dict[str, set[str]]:
    """Setting name -> files, for every setting the deployed code reads: os.environ.get/[...]/getenv,
    environ.get of a passed-in mapping, the _int/_bool helpers of core/settings.py (names built with an
    f-string of a module constant are resolved), binding expressions `%NAME%`, and trigger connections."""
    found: dict[str, set[str]] = {}
    for path in _python_files_deployed():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        }
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                function = node.func
                if node.args and (
                    (
                        isinstance(function, ast.Attribute)
                        and function.attr in ("get", "getenv")
                        and (_is_environ(function.value) or function.attr == "getenv")
                    )
                    or (isinstance(function, ast.Name) and function.id in ("_int", "_bool", "getenv"))
                ):
                    names.add(_constant(node.args[0], constants))
                for keyword in node.keywords:
                    if keyword.arg == "connection":
                        names.add(f"{_constant(keyword.value, constants)} (trigger connection)")
            elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                names.add(_constant(node.slice, constants))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # trigger and binding decorators
                for decorator in node.decorator_list:
                    for part in ast.walk(decorator):
                        if isinstance(part, ast.Constant) and isinstance(part.value, str):
                            names.update(re.findall(r"%([A-Za-z_]\w*)%", part.value))
        for name in names - {None}:
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_settings_scan_finds_what_the_code_reads():
    found = settings_read_by_code()
    # A sample that must be found by each way of reading (guards the scan itself).
    assert {
        "POS_BACKEND",
        "COSMOS_ENDPOINT",
        "RATE_LIMIT_PER_MINUTE",
        "COSMOS_CREATE_CONTAINERS",
        "AzureWebJobsStorage__queueServiceUri",
        "AzureWebJobsStorage__clientId",
        "RECONCILE_SWEEP_SCHEDULE",
        "AzureWebJobsStorage (trigger connection)",
    } <= set(found)


def test_every_setting_the_code_reads_is_an_app_setting_or_local_only():
    app_settings = set(_app_settings())
    missing = {}
    for name, files in settings_read_by_code().items():
        if name.endswith(" (trigger connection)"):
            connection = name.removesuffix(" (trigger connection)")
            # Identity-based connection: the account name (or service URI) plus the credential settings.
            if not {f"{connection}__accountName", f"{connection}__credential"} <= app_settings:
                missing[name] = files
        elif (
            name not in app_settings
            and name not in LOCAL_ONLY_SETTINGS
            and ALTERNATIVE_SETTINGS.get(name) not in app_settings
        ):
            missing[name] = files
    assert missing == {}, "set them in infra/main.bicep appSettings, or add them to LOCAL_ONLY_SETTINGS"
    assert app_settings & LOCAL_ONLY_SETTINGS == set()


def test_every_app_setting_is_read_by_the_code_or_the_platform():
    read = set(settings_read_by_code())
    assert {name for name in _app_settings() if name not in read and name not in PLATFORM_SETTINGS} == set()


def test_app_setting_values():
    settings = _app_settings()
    assert settings["POS_BACKEND"] == "azure"
    assert settings["COSMOS_CREATE_CONTAINERS"] == "false"
    assert settings["COSMOS_ENDPOINT"] == Ref("cosmos.outputs.endpoint")
    assert settings["AzureWebJobsStorage__accountName"] == Ref("storage.outputs.name")
    assert settings["AzureWebJobsStorage__credential"] == "managedidentity"
    assert (
        settings["AzureWebJobsStorage__clientId"] == settings["AZURE_CLIENT_ID"] == Ref("identity.properties.clientId")
    )
    assert settings["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"] == Expr(
        "'ClientId=${identity.properties.clientId};Authorization=AAD'"
    )
    assert set(settings) & FLEX_UNSUPPORTED_SETTINGS == set()


def test_app_setting_defaults_are_the_codes():
    """Each tunable setting comes from a main.bicep parameter whose default is the code's default."""
    settings = _app_settings()
    params = _model().params
    defaults = _code_defaults()
    expected = {
        "RATE_LIMIT_PER_MINUTE": defaults.rate_limit_per_minute,
        "RECONCILE_DELAY_SECONDS": defaults.reconcile_delay_seconds,
        "RECONCILE_SWEEP_GRACE_SECONDS": defaults.reconcile_sweep_grace_seconds,
        "BATCH_MARKER_TTL_DAYS": defaults.batch_marker_ttl_days,
        "TRADE_RECORD_RETENTION_DAYS": defaults.trade_record_retention_days,
        "LOG_LEVEL": defaults.log_level,
        "RECONCILE_SWEEP_SCHEDULE": _example_settings()["RECONCILE_SWEEP_SCHEDULE"],
        "EXPORT_SCHEDULE": _example_settings()["EXPORT_SCHEDULE"],
    }
    for name, default in expected.items():
        value = settings[name]
        parameter = value.path if isinstance(value, Ref) else re.fullmatch(r"string\((\w+)\)", value.text).group(1)
        assert params[parameter].default == default, name


def _example_settings() -> dict[str, str]:
    return settings_module.read_settings_file(settings_module.EXAMPLE_SETTINGS_FILE)


def _binding_setting_names() -> set[str]:
    """The app settings that trigger and binding decorators of the deployed code name as %NAME%."""
    names = set()
    for path in _python_files_deployed():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for part in (p for decorator in node.decorator_list for p in ast.walk(decorator)):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        names.update(re.findall(r"%([A-Za-z_]\w*)%", part.value))
    return names


def test_every_binding_setting_resolves_from_the_example_and_from_infra():
    """The host resolves %NAME% at start and refuses to run a function whose setting is missing: each
    must be set by the example settings alone (`func start`) and by infra's app settings (Azure), with
    one value in both, and no default elsewhere (core/settings.py has none)."""
    names = _binding_setting_names()
    assert "RECONCILE_SWEEP_SCHEDULE" in names  # guards the scan itself
    example, app_settings, params = _example_settings(), _app_settings(), _model().params
    for name in names:
        assert example.get(name, "").strip(), f"local.settings.json.example does not set {name}"
        value = app_settings[name]
        deployed = params[value.path].default if isinstance(value, Ref) else value
        assert deployed == example[name], name
    assert not hasattr(settings_module, "BINDING_SETTING_DEFAULTS")


def test_the_example_settings_run_on_the_emulators_the_real_host_can_serve():
    example = _example_settings()
    assert example["FUNCTIONS_WORKER_RUNTIME"] == "python"
    assert example["AzureWebJobsStorage"] == "UseDevelopmentStorage=true"  # Azurite: blob, queue, table
    assert example["POS_BACKEND"] == "azure"  # the trigger reads the Storage Queue, never a SQLite one
    assert example["COSMOS_ENDPOINT"] == "https://127.0.0.1:8081"
    assert "AzureWebJobsFeatureFlags" not in example  # EnableWorkerIndexing: ignored by the current host
    code_reads = {name.removesuffix(" (trigger connection)") for name in settings_read_by_code()}
    assert set(example) - code_reads <= {"FUNCTIONS_WORKER_RUNTIME", "APPLICATIONINSIGHTS_CONNECTION_STRING"}


def test_queue_names_are_the_codes():
    poison = AzureQueue.poison_name.fget(SimpleNamespace(queue_name=RECONCILE_QUEUE))
    main = _model()
    assert main.variables["queueNames"] == [RECONCILE_QUEUE, poison, WEBHOOK_QUEUE, f"{WEBHOOK_QUEUE}-poison"]
    assert main.modules["storage"].body["params"]["queueNames"] == Ref("queueNames")
    (queues,) = _resources_of_type(_module("storage"), "Microsoft.Storage/storageAccounts/queueServices/queues")
    assert re.fullmatch(r"\[for (\w+) in queueNames:.*", queues.loop.text, re.DOTALL)


def test_route_prefix_is_the_documents_and_the_base_url_outputs():
    prefix = settings_module.route_prefix(settings_module.host_settings())
    assert prefix == "pos/v1"
    documents = "\n".join(path.read_text(encoding="utf-8") for path in DOCS_WITH_URLS)
    paths = re.findall(r"(?:127\.0\.0\.1:7071|azurewebsites\.net)/([\w/.{}-]*)", documents)
    operator_guide = OPERATOR_GUIDE.read_text(encoding="utf-8")
    assert any(".azurewebsites.net/" in line for line in operator_guide.splitlines()), "no Azure URL shown"
    assert paths and all(path == prefix or path.startswith(prefix + "/") for path in paths), paths
    main = _model()
    assert main.variables["hostSettings"] == Expr("loadJsonContent('../host.json')")
    assert (MAIN.parent / "../host.json").resolve() == ROOT / "host.json"
    assert main.outputs["BASE_URL"] == Expr(
        "'https://${functionApp.outputs.defaultHostName}/${hostSettings.extensions.http.routePrefix}'"
    )
    assert main.outputs["FUNCTION_APP_NAME"] == Ref("functionApp.outputs.name")


# -- identity only, Flex Consumption ------------------------------------------------------------------


def test_no_key_or_connection_string_with_a_key_in_infra():
    secret = re.compile(
        r"listKeys\s*\(|listConnectionStrings\s*\(|listAccountSas\s*\(|listServiceSas\s*\(|"
        r"AccountKey|SharedAccessKey|primaryMasterKey|primaryKey|\bCOSMOS_KEY\b",
        re.IGNORECASE,
    )
    for path in sorted(INFRA.rglob("*")):
        if path.is_file():
            assert not secret.search(path.read_text(encoding="utf-8")), path
    for name, value in _app_settings().items():
        assert not (isinstance(value, Expr) and "list" in value.text.lower()), name


def test_key_authentication_is_disabled_everywhere():
    (account,) = _resources_of_type(_module("storage"), "Microsoft.Storage/storageAccounts")
    assert account.body["properties"]["allowSharedKeyAccess"] is False
    assert account.body["properties"]["allowBlobPublicAccess"] is False
    (cosmos,) = _resources_of_type(_module("cosmos"), "Microsoft.DocumentDB/databaseAccounts")
    assert cosmos.body["properties"]["disableLocalAuth"] is True
    (insights,) = _resources_of_type(_module("monitoring"), "Microsoft.Insights/components")
    assert insights.body["properties"]["DisableLocalAuth"] is True


def _role_assignments(model: bicep_model.BicepFile) -> set[tuple[str, str]]:
    """(principal parameter, role id) of every role assignment in a module."""
    found = set()
    for resource in model.resources.values():
        if resource.type not in (
            "Microsoft.Authorization/roleAssignments",
            "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments",
        ):
            continue
        properties = resource.body["properties"]
        role_names = bicep_model.member_paths(properties["roleDefinitionId"])
        roles = {model.variables[name] for name in role_names if name in model.variables}
        principal = properties["principalId"]
        principal_name = principal.path if isinstance(principal, Ref) else "?"
        if resource.loop:
            principal_name = re.search(r"in (\w+):", resource.loop.text).group(1)
        found |= {(principal_name, role) for role in roles}
    return found


def test_the_identity_holds_every_data_role():
    main = _model()
    principal = Ref("identity.properties.principalId")
    assert main.resources["identity"].type == "Microsoft.ManagedIdentity/userAssignedIdentities"
    assert main.modules["storage"].body["params"]["appPrincipalId"] == principal
    assert main.modules["monitoring"].body["params"]["appPrincipalId"] == principal
    assert "identity.properties.principalId" in bicep_model.member_paths(
        main.modules["cosmos"].body["params"]["dataContributorPrincipalIds"]
    )
    assert {
        ("appPrincipalId", ROLE_IDS["Storage Blob Data Owner"]),
        ("appPrincipalId", ROLE_IDS["Storage Queue Data Contributor"]),
    } <= _role_assignments(_module("storage"))
    assert ("appPrincipalId", ROLE_IDS["Monitoring Metrics Publisher"]) in _role_assignments(_module("monitoring"))
    assert ("dataContributorPrincipalIds", ROLE_IDS["Cosmos DB Built-in Data Contributor"]) in _role_assignments(
        _module("cosmos")
    )


def test_function_app_runs_on_flex_consumption_with_the_identity():
    app = _module("functionApp")
    (plan,) = _resources_of_type(app, "Microsoft.Web/serverfarms")
    assert plan.body["sku"] == {"name": "FC1", "tier": "FlexConsumption"}
    (site,) = _resources_of_type(app, "Microsoft.Web/sites")
    assert site.body["kind"] == "functionapp,linux"
    assert site.body["identity"]["type"] == "UserAssigned"
    config = site.body["properties"]["functionAppConfig"]
    assert config["runtime"] == {"name": "python", "version": "3.13"}
    scale = config["scaleAndConcurrency"]
    assert {name: scale[name] for name in ("instanceMemoryMB", "maximumInstanceCount")} == {
        "instanceMemoryMB": Ref("instanceMemoryMB"),
        "maximumInstanceCount": Ref("maximumInstanceCount"),
    }
    assert config["deployment"]["storage"]["authentication"] == {
        "type": "UserAssignedIdentity",
        "userAssignedIdentityResourceId": Ref("identityId"),
    }
    assert "'azd-service-name': 'api'" in site.body["tags"].text
    (settings,) = _resources_of_type(app, "Microsoft.Web/sites/config")
    assert settings.body["name"] == "appsettings" and settings.body["properties"] == Ref("appSettings")
    passed = _model().modules["functionApp"].body["params"]
    assert passed["appSettings"] == Ref("appSettings") and passed["identityId"] == Ref("identity.id")
    assert passed["instanceMemoryMB"] == Ref("instanceMemoryMB")
    assert passed["maximumInstanceCount"] == Ref("maximumInstanceCount")


# -- azd and packaging --------------------------------------------------------------------------------


def test_azure_yaml_deploys_the_project_as_a_python_function():
    document = yaml.safe_load((ROOT / "azure.yaml").read_text(encoding="utf-8"))
    assert document["services"] == {"api": {"project": ".", "language": "python", "host": "function"}}
    infra = document["infra"]
    assert (ROOT / infra["path"] / f"{infra['module']}.bicep") == MAIN
    assert (ROOT / infra["path"] / f"{infra['module']}.parameters.json") == AZD_PARAMETERS


SKIPPED_FOLDERS = {".git", ".venv", "node_modules", ".data", "__pycache__", ".pytest_cache", ".ruff_cache"}


def _repository_files() -> list[str]:
    files = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED_FOLDERS]
        files += [str((Path(folder) / name).relative_to(ROOT).as_posix()) for name in names]
    return files


def _funcignore() -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines((ROOT / ".funcignore").read_text(encoding="utf-8").splitlines())


def _deployed_files() -> list[str]:
    ignore = _funcignore()
    return [path for path in _repository_files() if not ignore.match_file(path)]


RUN_TIME_FILES = {
    "function_app.py",
    "host.json",
    "requirements.txt",
    "docs/openapi.json",
    "infra/cosmos/containers.json",
}


@functools.cache
def _imported_project_files() -> frozenset[str]:
    """Every project file the app imports, the Azure adapters included (they load on POS_BACKEND=azure)."""
    script = (
        "import sys, function_app, backends.cosmos.storage, backends.azure_queue\n"
        "print('\\n'.join(m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)))"
    )
    listed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "APPLICATIONINSIGHTS_CONNECTION_STRING": ""},
    ).stdout.split()
    files = {Path(file).resolve() for file in listed}
    return frozenset(
        str(file.relative_to(ROOT).as_posix())
        for file in files
        if ROOT in file.parents and not ({".venv", "node_modules"} & set(file.relative_to(ROOT).parts))
    )


def test_funcignore_ships_what_the_app_reads_at_run_time():
    needed = RUN_TIME_FILES | _imported_project_files()
    needed |= {path for path in _repository_files() if path.startswith("reference/data/")}
    assert {"function_app.py", "triggers/openapi_document.py", "backends/cosmos/storage.py"} <= needed
    assert needed - set(_deployed_files()) == set()


def test_funcignore_ships_nothing_but_the_app():
    """Deployed: the packages the app imports (all their files) and the run-time files; nothing else."""
    packages = {path.split("/")[0] + "/" for path in _imported_project_files() if "/" in path}
    extra = {path for path in _deployed_files() if path not in RUN_TIME_FILES and not path.startswith(tuple(packages))}
    assert extra == set(), "add them to .funcignore"


def test_funcignore_leaves_out_tests_tooling_and_the_rest_of_infra():
    ignore = _funcignore()
    for path in [
        "tests/toolchain/test_infra.py",
        "tests/conftest.py",
        "devhost/__main__.py",
        "hq/cli.py",
        "bench/x.py",
        "examples/push_day.py",
        "node_modules/azurite/package.json",
        ".venv/bin/python",
        ".data/pos.sqlite",
        "local.settings.json",
        "docs/decisions/README.md",
        "infra/main.bicep",
        "infra/modules/cosmos.bicep",
        "infra/main.test.parameters.json",
        "README.md",
        "Makefile",
        "triggers/__pycache__/http.cpython-311.pyc",
        ".git/config",
        "azure.yaml",
    ]:
        assert ignore.match_file(path), path
    assert not any(path.startswith(("tests/", "devhost/", "bench/", "examples/")) for path in _deployed_files())


# -- decision 0066: the first deployment succeeds ------------------------------------------------------


def test_flex_site_sets_no_ftps_state_and_basic_auth_publishing_is_off():
    """Resource Manager refuses siteConfig.ftpsState on Flex Consumption sites; basic-auth publishing is
    switched off with its own policies, for scm and ftp."""
    app = _module("functionApp")
    (site,) = _resources_of_type(app, "Microsoft.Web/sites")
    assert site.body["properties"]["siteConfig"] == {"minTlsVersion": "1.2"}
    assert "ftpsState" not in app.source
    policies = _resources_of_type(app, "Microsoft.Web/sites/basicPublishingCredentialsPolicies")
    assert sorted(policy.body["name"] for policy in policies) == ["ftp", "scm"]
    for policy in policies:
        assert policy.body["parent"] == Ref(site.name)
        assert policy.body["properties"] == {"allow": False}


def test_cosmos_role_assignments_run_one_at_a_time_after_the_containers():
    cosmos = _module("cosmos")
    assignments = cosmos.resources["dataContributors"]
    (containers,) = _resources_of_type(cosmos, "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers")
    assert assignments.loop is not None
    assert assignments.decorators["batchSize"] == [1]
    assert assignments.body["dependsOn"] == [Ref(containers.name)]


# azd: AZURE_ENV_NAME is 1-64 letters, digits and - . ( ) _.
AZD_ENVIRONMENT_NAMES = [
    "pos-test",
    "production",
    "x",
    "Prod.EU(West)_2024",
    "(.)_-",
    "a" * 64,
    "PartnerPOS-ingestion.Production_(eu-west-1)_blue.green-2025-Q4",
]
# What each resource type accepts in a name (Azure resource naming rules).
NAME_RULES = {
    "identity": r"[A-Za-z0-9][A-Za-z0-9_-]{2,127}",
    "workspace": r"[A-Za-z0-9][A-Za-z0-9-]{2,61}[A-Za-z0-9]",
    "appInsights": r"[^%&\\?/]{1,255}",
    "storage": r"[a-z0-9]{3,24}",
    "cosmos": r"[a-z0-9][a-z0-9-]{1,42}[a-z0-9]",
    "plan": r"[A-Za-z0-9][A-Za-z0-9-]{0,58}[A-Za-z0-9]",
    "functionApp": r"[A-Za-z0-9][A-Za-z0-9-]{0,58}[A-Za-z0-9]",
    "vnet": r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}[A-Za-z0-9_]",
}


def _names_for(environment_name: str) -> dict:
    main = _model()
    values = {"environmentName": environment_name, "resourceToken": "abcdefghijklm", "cosmosAccountName": ""}
    for variable in ("environmentSlug", "nameSuffix"):
        values[variable] = bicep_model.evaluate(main.variables[variable].text, values)
    return {
        kind: bicep_model.evaluate(name.text, values) if isinstance(name, Expr) else name
        for kind, name in main.variables["names"].items()
    }


@pytest.mark.parametrize("environment_name", AZD_ENVIRONMENT_NAMES)
def test_every_resource_name_fits_its_type_for_any_azd_environment_name(environment_name):
    assert re.fullmatch(r"[A-Za-z0-9().\-_]{1,64}", environment_name)  # a name azd accepts
    names = _names_for(environment_name)
    assert set(names) == set(NAME_RULES)
    for kind, name in names.items():
        assert re.fullmatch(NAME_RULES[kind], name), (kind, name)
        assert "--" not in name, (kind, name)


def test_resource_names_come_from_the_names_variable():
    main = _model()
    assert main.params["environmentName"].decorators["maxLength"] == [64]
    assert main.params["environmentName"].decorators["minLength"] == [1]
    assert _names_for("pos-test")["functionApp"] == "func-pos-postest-abcdefghijklm"
    assert _names_for("(.)_-")["cosmos"] == "cosmos-pos-abcdefghijklm"
    assert main.resources["identity"].body["name"] == Ref("names.identity")
    params = {name: main.modules[name].body["params"] for name in main.modules}
    assert params["monitoring"]["workspaceName"] == Ref("names.workspace")
    assert params["monitoring"]["appInsightsName"] == Ref("names.appInsights")
    assert params["storage"]["name"] == Ref("names.storage")
    assert params["cosmos"]["accountName"] == Ref("names.cosmos")
    assert params["functionApp"]["planName"] == Ref("names.plan")
    assert params["functionApp"]["appName"] == Ref("names.functionApp")
    assert params["network"]["vnetName"] == Ref("names.vnet")
    assert "64 characters" in OPERATOR_GUIDE.read_text(encoding="utf-8")


def _guard(variable: str, **values):
    main = _model()
    return bicep_model.evaluate(main.variables[variable].text, values)


def test_autoscale_throughput_must_be_a_multiple_of_1000():
    assert _guard("checkedAutoscaleMaxThroughput", cosmosAutoscaleMaxThroughput=4000) == 4000
    with pytest.raises(bicep_model.DeploymentFailure, match="multiple of 1000"):
        _guard("checkedAutoscaleMaxThroughput", cosmosAutoscaleMaxThroughput=4500)
    assert _model().modules["cosmos"].body["params"]["autoscaleMaxThroughput"] == Ref("checkedAutoscaleMaxThroughput")
    for values in [_parameter_values(path) for path in ENVIRONMENT_FILES.values()] + [_azd_values({})]:
        assert values.get("cosmosAutoscaleMaxThroughput", 1000) % 1000 == 0


def test_flex_instance_counts_are_within_what_the_plan_accepts():
    params = _model().params
    assert params["maximumInstanceCount"].decorators["minValue"] == [40]
    assert params["maximumInstanceCount"].decorators["maxValue"] == [1000]
    counts = {"maximumInstanceCount": 40, "zoneRedundant": False}
    assert _guard("checkedAlwaysReadyInstanceCount", alwaysReadyInstanceCount=2, **counts) == 2
    with pytest.raises(bicep_model.DeploymentFailure, match="must not exceed maximumInstanceCount"):
        _guard("checkedAlwaysReadyInstanceCount", alwaysReadyInstanceCount=41, **counts)


# -- decision 0066: capacity ---------------------------------------------------------------------------


def test_http_concurrency_and_always_ready_instances_are_parameters():
    main = _model()
    assert main.params["httpPerInstanceConcurrency"].default == 1  # one core, one GIL: docs/performance.md
    assert main.params["alwaysReadyInstanceCount"].default == 0
    passed = main.modules["functionApp"].body["params"]
    assert passed["httpPerInstanceConcurrency"] == Ref("httpPerInstanceConcurrency")
    assert passed["alwaysReadyHttpInstances"] == Ref("checkedAlwaysReadyInstanceCount")
    (site,) = _resources_of_type(_module("functionApp"), "Microsoft.Web/sites")
    scale = site.body["properties"]["functionAppConfig"]["scaleAndConcurrency"]
    assert scale["triggers"] == {"http": {"perInstanceConcurrency": Ref("httpPerInstanceConcurrency")}}
    assert bicep_model.evaluate(scale["alwaysReady"].text, {"alwaysReadyHttpInstances": 0}) == []
    assert bicep_model.evaluate(scale["alwaysReady"].text, {"alwaysReadyHttpInstances": 2}) == [
        {"name": "http", "instanceCount": 2}
    ]
    test, production = (_parameter_values(path) for path in ENVIRONMENT_FILES.values())
    assert test["alwaysReadyInstanceCount"] == 0 and production["alwaysReadyInstanceCount"] >= 1
    assert _azd_values({})["httpPerInstanceConcurrency"] == main.params["httpPerInstanceConcurrency"].default


def test_a_platform_429_is_told_from_the_apps():
    document = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
    descriptions = [
        operation["responses"]["429"]["description"]
        for path in document["paths"].values()
        for operation in path.values()
        if "429" in operation.get("responses", {})
    ]
    assert descriptions and all("RATE_LIMITED" in text and "platform" in text for text in descriptions)
    partners = PARTNER_GUIDE.read_text(encoding="utf-8").split("## Rules of the wire")[1].split("\n## ")[0]
    assert "429" in partners and "RATE_LIMITED" in partners and "platform" in partners


# -- decision 0066: production posture -----------------------------------------------------------------


def test_vnet_switch_puts_storage_and_cosmos_behind_private_endpoints():
    main = _model()
    assert main.params["vnetEnabled"].default is False
    test, production = (_parameter_values(path) for path in ENVIRONMENT_FILES.values())
    assert (test["vnetEnabled"], production["vnetEnabled"]) == (False, True)
    assert main.modules["network"].condition == Expr("(vnetEnabled)")
    closed = {"vnetEnabled": True, "operatorIpRules": []}
    assert bicep_model.evaluate(main.variables["publicNetworkAccess"].text, closed) == "Disabled"
    opened = {"vnetEnabled": False, "operatorIpRules": []}
    assert bicep_model.evaluate(main.variables["publicNetworkAccess"].text, opened) == "Enabled"
    for module in ("storage", "cosmos"):
        assert main.modules[module].body["params"]["publicNetworkAccess"] == Ref("publicNetworkAccess")
        (account,) = [
            resource
            for resource in _module(module).resources.values()
            if resource.type in ("Microsoft.Storage/storageAccounts", "Microsoft.DocumentDB/databaseAccounts")
        ]
        assert account.body["properties"]["publicNetworkAccess"] == Ref("publicNetworkAccess")
    network = _module("network")
    groups = {endpoint["groupId"]: endpoint["serviceId"] for endpoint in network.variables["endpoints"]}
    assert groups == {"blob": Ref("storageAccountId"), "queue": Ref("storageAccountId"), "Sql": Ref("cosmosAccountId")}
    (vnet,) = _resources_of_type(network, "Microsoft.Network/virtualNetworks")
    app_subnet = network.variables["subnets"][1]
    assert app_subnet["properties"]["delegations"][0]["properties"]["serviceName"] == "Microsoft.App/environments"
    assert network.outputs["appSubnetId"] == Ref("vnet.properties.subnets") or "subnets[1]" in network.source
    for resource_type in (
        "Microsoft.Network/privateEndpoints",
        "Microsoft.Network/privateDnsZones",
        "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
        "Microsoft.Network/privateEndpoints/privateDnsZoneGroups",
    ):
        resource = next(r for r in _resources_of_type(network, resource_type) if r.name != "operatorZoneLinks")
        assert re.match(r"\[for \(?endpoint\b.* in (endpoints|createdZones):", resource.loop.text), resource_type
    passed = main.modules["functionApp"].body["params"]["virtualNetworkSubnetId"]
    assert passed == Expr("vnetEnabled ? network.outputs.appSubnetId : ''")
    (site,) = _resources_of_type(_module("functionApp"), "Microsoft.Web/sites")
    assert "virtualNetworkSubnetId" in bicep_model.member_paths(site.body["properties"]["virtualNetworkSubnetId"])


def test_zone_redundancy_for_the_plan_and_cosmos_is_a_parameter_on_in_production():
    main = _model()
    test, production = (_parameter_values(path) for path in ENVIRONMENT_FILES.values())
    assert (test["zoneRedundant"], production["zoneRedundant"]) == (False, True)
    assert production["storageSku"] == "Standard_ZRS"
    for module in ("functionApp", "cosmos"):
        assert main.modules[module].body["params"]["zoneRedundant"] == Ref("zoneRedundant")
    (plan,) = _resources_of_type(_module("functionApp"), "Microsoft.Web/serverfarms")
    assert plan.body["properties"]["zoneRedundant"] == Ref("zoneRedundant")
    (account,) = _resources_of_type(_module("cosmos"), "Microsoft.DocumentDB/databaseAccounts")
    assert [location["isZoneRedundant"] for location in account.body["properties"]["locations"]] == [
        Ref("zoneRedundant")
    ]


def test_diagnostic_settings_send_chosen_categories_to_the_workspace():
    """Decision 0067: categories chosen for their use and volume (decision 0067; bench/cost_model.py models
    them): Cosmos DB control-plane always and data-plane only by parameter (off in production); Storage
    writes and deletes, not reads (the host's polls); no site setting (FunctionAppLogs repeats what
    Application Insights already holds in the same workspace)."""
    main = _model()
    assert _module("monitoring").outputs["workspaceId"] == Ref("workspace.id")
    expected_scopes = {"cosmos": {"account"}, "storage": {"blobService", "queueService"}}
    for module, scopes in expected_scopes.items():
        assert main.modules[module].body["params"]["workspaceId"] == Ref("monitoring.outputs.workspaceId")
        settings = _resources_of_type(_module(module), "Microsoft.Insights/diagnosticSettings")
        assert {setting.body["scope"].path for setting in settings} == scopes, module
        for setting in settings:
            assert setting.body["properties"]["workspaceId"] == Ref("workspaceId")
    assert _resources_of_type(_module("functionApp"), "Microsoft.Insights/diagnosticSettings") == []
    assert "workspaceId" not in main.modules["functionApp"].body["params"]
    (cosmos_setting,) = _resources_of_type(_module("cosmos"), "Microsoft.Insights/diagnosticSettings")
    assert cosmos_setting.body["properties"]["logs"] == [
        {"category": "ControlPlaneRequests", "enabled": True},
        {"category": "DataPlaneRequests", "enabled": Ref("dataPlaneLogs")},
    ]
    assert main.modules["cosmos"].body["params"]["dataPlaneLogs"] == Ref("cosmosDataPlaneLogs")
    assert main.params["cosmosDataPlaneLogs"].default is False
    test, production = (_parameter_values(path) for path in ENVIRONMENT_FILES.values())
    assert (test["cosmosDataPlaneLogs"], production["cosmosDataPlaneLogs"]) == (True, False)
    storage = _module("storage")
    assert storage.variables["queueLogs"] == [
        {"category": "StorageWrite", "enabled": True},
        {"category": "StorageDelete", "enabled": True},
    ]
    assert storage.variables["blobLogs"] == [{"category": "StorageDelete", "enabled": True}]
    logs = {
        s.body["scope"].path: s.body["properties"]["logs"]
        for s in _resources_of_type(storage, "Microsoft.Insights/diagnosticSettings")
    }
    assert logs == {"blobService": Ref("blobLogs"), "queueService": Ref("queueLogs")}


# -- decision 0066: .funcignore under both tools' rules ------------------------------------------------


def _core_tools_ignore() -> CoreToolsIgnore:
    return CoreToolsIgnore((ROOT / ".funcignore").read_text(encoding="utf-8"))


def test_the_core_tools_port_anchors_patterns_at_the_root():
    """Why each pattern is written twice: Core Tools' `__pycache__/` leaves out the root's cache only."""
    rules = CoreToolsIgnore("__pycache__/\n*.pyc\ndocs/*\n!docs/openapi.json\n")
    assert not rules.accepts("__pycache__/function_app.cpython-311.pyc")
    assert rules.accepts("triggers/__pycache__/routes.cpython-311.pyc")
    assert not rules.accepts("x.pyc") and rules.accepts("triggers/x.pyc")
    assert not rules.accepts("docs/decisions/README.md") and rules.accepts("docs/openapi.json")


# Files a developer's or azd's machine holds that must never ship, wherever they are.
NEVER_SHIPPED = [
    "__pycache__/function_app.cpython-311.pyc",
    "triggers/__pycache__/routes.cpython-311.pyc",
    "ingest/__pycache__/batches.cpython-311.pyc",
    "backends/sub/__pycache__/deep.cpython-311.pyc",
    "function_app.pyc",
    "triggers/routes.pyc",
    "reconcile/a/b/c.pyc",
    "wt-infra_env/pyvenv.cfg",
    "wt-infra_env/lib/python3.11/site-packages/six.py",
    "pos-ingestion_env/bin/python",
    "partner-pos_env/lib/python3.11/site-packages/azure/functions/__init__.py",
    ".venv/bin/python",
    ".venv/lib/python3.11/site-packages/pydantic/main.py",
]


@pytest.mark.parametrize("path", NEVER_SHIPPED)
def test_funcignore_leaves_out_caches_and_virtual_environments_under_both_tools(path):
    assert _funcignore().match_file(path), f"azd ships {path}"
    assert not _core_tools_ignore().accepts(path), f"Core Tools ships {path}"


def test_both_tools_ship_the_same_files_of_the_repository():
    core_tools = _core_tools_ignore()
    azd = set(_deployed_files())
    listed = [path for path in _repository_files() if not path.startswith(".git/")]
    assert {path for path in listed if core_tools.accepts(path)} - azd == set()
    assert azd - {path for path in listed if core_tools.accepts(path)} == set()
    assert RUN_TIME_FILES <= azd


# -- decision 0067: production on day one --------------------------------------------------------------


def test_subnets_use_the_single_address_prefix_of_the_flex_samples():
    """The Flex Consumption samples declare `addressPrefix` (a string); the Container Apps environment that
    Flex integration delegates to has refused array-form subnets elsewhere."""
    network = _module("network")
    (vnet,) = _resources_of_type(network, "Microsoft.Network/virtualNetworks")
    assert vnet.body["properties"]["subnets"] == Expr("concat(subnets, gatewaySubnets)")
    gateway = bicep_model.evaluate(
        network.variables["gatewaySubnets"].text, {"gatewaySubnetPrefix": "10.0.3.0/27", "gatewaySubnetName": "g"}
    )
    for subnet in network.variables["subnets"] + gateway:
        assert isinstance(subnet["properties"]["addressPrefix"], (str, Ref)), subnet["name"]
        assert "addressPrefixes" not in subnet["properties"], subnet["name"]


def test_publishing_credentials_policies_carry_a_location():
    for policy in _resources_of_type(_module("functionApp"), "Microsoft.Web/sites/basicPublishingCredentialsPolicies"):
        assert policy.body["location"] == Ref("location"), policy.name


def test_zone_redundancy_guards_always_ready_instances_and_storage_redundancy():
    counts = {"maximumInstanceCount": 200, "zoneRedundant": True}
    assert _guard("checkedAlwaysReadyInstanceCount", alwaysReadyInstanceCount=0, **counts) == 0
    assert _guard("checkedAlwaysReadyInstanceCount", alwaysReadyInstanceCount=2, **counts) == 2
    with pytest.raises(bicep_model.DeploymentFailure, match="zoneRedundant, alwaysReadyInstanceCount must be 0 or at"):
        _guard("checkedAlwaysReadyInstanceCount", alwaysReadyInstanceCount=1, **counts)
    assert (
        _guard(
            "checkedAlwaysReadyInstanceCount", alwaysReadyInstanceCount=1, maximumInstanceCount=40, zoneRedundant=False
        )
        == 1
    )
    assert _guard("checkedStorageSku", zoneRedundant=True, storageSku="Standard_ZRS") == "Standard_ZRS"
    assert _guard("checkedStorageSku", zoneRedundant=False, storageSku="Standard_LRS") == "Standard_LRS"
    with pytest.raises(bicep_model.DeploymentFailure, match="storageSku must be Standard_ZRS"):
        _guard("checkedStorageSku", zoneRedundant=True, storageSku="Standard_LRS")
    main = _model()
    assert main.modules["storage"].body["params"]["skuName"] == Ref("checkedStorageSku")
    description = main.params["zoneRedundant"].decorators["description"][0]
    assert "8 billed instances" in description and "only when the account is created" in description
    for values in [_parameter_values(path) for path in ENVIRONMENT_FILES.values()] + [_azd_values({})]:
        if values["zoneRedundant"]:
            assert values["storageSku"] == "Standard_ZRS" and values["alwaysReadyInstanceCount"] != 1


@pytest.mark.parametrize(
    "vnet, ranges, rules, access",
    [
        (False, "", [], "Enabled"),  # test: public, Entra ID only
        (False, "203.0.113.7", [], "Enabled"),  # no network: rules would close the accounts to everyone else
        (True, "", [], "Disabled"),  # production without a way in
        (True, "  ", [], "Disabled"),
        (True, "203.0.113.7", ["203.0.113.7"], "Enabled"),  # HQ's address only, through each firewall
        (True, "203.0.113.7, 198.51.100.0/24", ["203.0.113.7", "198.51.100.0/24"], "Enabled"),
    ],
)
def test_hq_gets_a_way_in_through_its_own_addresses_only(vnet, ranges, rules, access):
    main = _model()
    values = {"vnetEnabled": vnet, "operatorIpRanges": ranges}
    values["operatorIpRules"] = bicep_model.evaluate(main.variables["operatorIpRules"].text, values)
    assert values["operatorIpRules"] == rules
    assert bicep_model.evaluate(main.variables["publicNetworkAccess"].text, values) == access


def test_the_accounts_firewalls_admit_the_operator_ranges():
    main = _model()
    for module in ("storage", "cosmos"):
        assert main.modules[module].body["params"]["allowedIpRanges"] == Ref("operatorIpRules")
    assert main.modules["storage"].body["params"]["networkRestricted"] == Ref("vnetEnabled")
    (account,) = _resources_of_type(_module("cosmos"), "Microsoft.DocumentDB/databaseAccounts")
    assert re.fullmatch(
        r"\[for (\w+) in allowedIpRanges: \{\s*ipAddressOrRange: \1\s*\}\]", account.body["properties"]["ipRules"].text
    )
    (storage,) = _resources_of_type(_module("storage"), "Microsoft.Storage/storageAccounts")
    acls = storage.body["properties"]["networkAcls"].text
    assert acls.startswith("networkRestricted ? {") and "defaultAction: 'Deny'" in acls and "bypass: 'None'" in acls
    assert re.search(r"ipRules: \[for (\w+) in allowedIpRanges: \{\s*value: .*\1\s*action: 'Allow'", acls)
    assert _azd_variables()["operatorIpRanges"] == "POS_OPERATOR_IP_RANGES"


def test_private_dns_zones_can_be_linked_to_hqs_network():
    main = _model()
    assert main.modules["network"].body["params"]["linkedVnetIds"] == Ref("operatorNetworks")
    values = {"vnetEnabled": True, "operatorVnetIds": "/subscriptions/s/vnet-a, /subscriptions/s/vnet-b"}
    assert bicep_model.evaluate(main.variables["operatorNetworks"].text, values) == [
        "/subscriptions/s/vnet-a",
        "/subscriptions/s/vnet-b",
    ]
    network = _module("network")
    (links,) = [r for r in network.resources.values() if r.name == "operatorZoneLinks"]
    assert "range(0, length(createdZones) * length(linkedVnetIds))" in links.loop.text
    endpoints = [{"zone": f"zone-{n}"} for n in range(3)]
    vnets = ["vnet-a", "vnet-b"]
    pairs = set()
    for i in range(len(endpoints) * len(vnets)):  # every zone with every network, once
        values = {"i": i, "createdZones": endpoints, "linkedVnetIds": vnets}
        name = bicep_model.evaluate(links.body["name"].text, values)
        network_id = bicep_model.evaluate("linkedVnetIds[i % length(linkedVnetIds)]", values)
        pairs.add((name.split("/")[0], network_id))
    assert pairs == {(endpoint["zone"], vnet) for endpoint in endpoints for vnet in vnets}


def test_cosmos_takes_continuous_backup_and_blobs_soft_delete():
    main = _model()
    (account,) = _resources_of_type(_module("cosmos"), "Microsoft.DocumentDB/databaseAccounts")
    assert account.body["properties"]["backupPolicy"] == {
        "type": "Continuous",
        "continuousModeProperties": {"tier": Ref("backupTier")},
    }
    assert main.modules["cosmos"].body["params"]["backupTier"] == Ref("cosmosBackupTier")
    assert main.params["cosmosBackupTier"].decorators["allowed"][0] == ["Continuous7Days", "Continuous30Days"]
    (blobs,) = _resources_of_type(_module("storage"), "Microsoft.Storage/storageAccounts/blobServices")
    for policy in ("deleteRetentionPolicy", "containerDeleteRetentionPolicy"):
        assert blobs.body["properties"][policy] == {"enabled": True, "days": Ref("softDeleteDays")}
    assert main.modules["storage"].body["params"]["softDeleteDays"] == Ref("blobSoftDeleteDays")
    assert main.variables["names"]["cosmos"] == Expr(
        "empty(cosmosAccountName) ? 'cosmos-pos-${nameSuffix}' : cosmosAccountName"
    )
    assert _names_for("pos-test")["cosmos"] == "cosmos-pos-postest-abcdefghijklm"


def test_the_export_container_cools_down_and_its_timer_writes_it_as_the_app():
    main, storage = _model(), _module("storage")
    (container,) = [
        each
        for each in _resources_of_type(storage, "Microsoft.Storage/storageAccounts/blobServices/containers")
        if each.body["name"] == Ref("exportContainerName")
    ]
    assert container.body["properties"] == {"publicAccess": "None"}
    (policy,) = _resources_of_type(storage, "Microsoft.Storage/storageAccounts/managementPolicies")
    (rule,) = policy.body["properties"]["policy"]["rules"]
    assert rule["definition"]["filters"]["prefixMatch"] == [Expr("'${exportContainerName}/'")]
    assert rule["definition"]["actions"]["baseBlob"] == {
        "tierToCool": {"daysAfterModificationGreaterThan": Ref("exportCoolAfterDays")}
    }
    passed = main.modules["storage"].body["params"]
    assert (passed["exportContainerName"], passed["exportCoolAfterDays"]) == (
        Ref("exportContainerName"),
        Ref("exportCoolAfterDays"),
    )
    assert main.params["exportContainerName"].default == "exports"
    assert main.params["exportCoolAfterDays"].default == 30
    settings = _app_settings()
    assert settings["EXPORT_DESTINATION"] == Ref("storage.outputs.exportContainerUrl")
    assert settings["EXPORT_SCHEDULE"] == Ref("exportSchedule")
    # The app writes it as Storage Blob Data Owner of the account; the operator gets Contributor on it alone.
    roles = {each.name: each for each in _resources_of_type(storage, "Microsoft.Authorization/roleAssignments")}
    assert roles["operatorExportContributor"].body["scope"] == Ref("exportContainer")
    assert "appBlobOwner" in roles


def test_fabric_mirroring_is_a_parameter_that_lets_fabric_through_the_cosmos_firewall():
    main = _model()
    assert main.params["fabricMirroring"].default is False
    assert main.modules["cosmos"].body["params"]["fabricMirroring"] == Ref("fabricMirroring")
    (account,) = _resources_of_type(_module("cosmos"), "Microsoft.DocumentDB/databaseAccounts")
    assert account.body["properties"]["networkAclBypass"] == Expr("fabricMirroring ? 'AzureServices' : 'None'")
    assert account.body["properties"]["backupPolicy"]["type"] == "Continuous"  # mirroring's prerequisite


def _alerts() -> bicep_model.BicepFile:
    return _module("alerts")


def test_alert_rules_cover_what_needs_hq_and_notify_the_action_groups():
    main = _model()
    passed = main.modules["alerts"].body["params"]
    assert passed["emailAddress"] == Ref("checkedAlertEmailAddress")  # alertEmailAddress, guarded (0091)
    assert passed["actionGroupId"] == Ref("alertActionGroupId")
    assert passed["poisonQueueName"] == Expr("queueNames[1]")
    assert main.variables["queueNames"][1] == f"{RECONCILE_QUEUE}-poison"
    alerts = _alerts()
    rules = {rule["name"]: rule for rule in alerts.variables["logRules"]}
    assert set(rules) == {"failed-requests", "poisoned-reconciliations", "overdue-closes", "failing-webhooks"}
    metric_rules = _resources_of_type(alerts, "Microsoft.Insights/metricAlerts")
    assert {rule.name for rule in metric_rules} == {"cosmosThrottling", "functionErrors"}
    (log_alerts,) = _resources_of_type(alerts, "Microsoft.Insights/scheduledQueryRules")
    assert log_alerts.body["properties"]["actions"] == {"actionGroups": Ref("actionGroupIds")}
    assert log_alerts.body["properties"]["scopes"] == [Ref("workspaceId")]
    for rule in metric_rules:
        assert re.fullmatch(
            r"\[for (\w+) in actionGroupIds: \{\s*actionGroupId: \1\s*\}\]", rule.body["properties"]["actions"].text
        )
    (group,) = _resources_of_type(alerts, "Microsoft.Insights/actionGroups")
    assert group.condition == Expr("(!empty(emailAddress))")
    assert len(group.body["properties"]["groupShortName"]) <= 12  # the service's limit
    throttling = next(rule for rule in metric_rules if rule.name == "cosmosThrottling")
    (criterion,) = throttling.body["properties"]["criteria"]["allOf"]
    assert (criterion["metricName"], criterion["dimensions"][0]["values"]) == ("TotalRequests", ["429"])


def test_log_alert_queries_read_what_the_app_and_the_host_write():
    """The queries match the log lines as the code writes them, so a renamed line cannot silence a rule."""
    rules = {rule["name"]: rule for rule in _alerts().variables["logRules"]}
    telemetry_source = (ROOT / "triggers" / "telemetry.py").read_text(encoding="utf-8")
    assert '"event": "http_request"' in telemetry_source and '"status": status' in telemetry_source
    assert 'Properties.event) == "http_request"' in rules["failed-requests"]["query"]
    sweep = (ROOT / "reconcile" / "service.py").read_text(encoding="utf-8")
    assert 'log.warning("sweep re-enqueued %d overdue reconciliations"' in sweep
    assert 'startswith "sweep re-enqueued"' in rules["overdue-closes"]["query"]
    worker = (ROOT / "triggers" / "reconciliation.py").read_text(encoding="utf-8")
    assert "moved to the poison queue" in worker
    poison = rules["poisoned-reconciliations"]["query"].text
    # The host logs "Message has reached MaxDequeueCount of 5. Moving message to queue '<poison queue>'."
    # (azure-webjobs-sdk QueueProcessor) at Warning, which host.json lets through.
    assert 'Message has "${poisonQueueName}"' in poison and '"moved to the poison queue"' in poison
    webhooks = (ROOT / "ingest" / "webhooks" / "delivery.py").read_text(encoding="utf-8")
    assert 'DISABLED_LOG = "webhook endpoint disabled"' in webhooks and '"webhook %s partner_id' in webhooks
    assert 'startswith "webhook endpoint disabled"' in rules["failing-webhooks"]["query"]
    host = json.loads((ROOT / "host.json").read_text(encoding="utf-8"))
    assert host["logging"]["logLevel"]["default"] in ("Warning", "Information")


def test_the_preprovision_hook_is_wired_in_azure_yaml():
    document = yaml.safe_load((ROOT / "azure.yaml").read_text(encoding="utf-8"))
    hook = document["hooks"]["preprovision"]["posix"]
    assert hook["run"] == "./infra/hooks/preprovision.sh" and hook["continueOnError"] is False
    script = ROOT / "infra" / "hooks" / "preprovision.sh"
    assert os.access(script, os.X_OK)
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0


# The hook's behaviour against a stand-in az: tests/toolchain/test_preprovision_hook.py.
