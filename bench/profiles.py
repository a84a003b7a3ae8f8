"""`python -m bench.run --profile`: pyinstrument (call tree) and cProfile (flat, by own time and by module)
of the accept and of the largest reconciliation, into bench/results/profile-*.txt."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from bench import ROOT, generate, harness
from bench.measure import Config, fresh
from bench.reconciliation import load_store_day


def profile(cfg: Config, tmp: Path, out_dir: Path) -> list[Path]:
    """pyinstrument (call tree) and cProfile (flat, by own time) of the accept and of the largest
    reconciliation."""
    import cProfile
    import io
    import pstats

    from pyinstrument import Profiler

    from reconcile.service import reconcile

    written = []
    service = harness.open_service(tmp / "profile-accept")
    repeat = max(3, cfg.repeat // 2)
    bodies = generate.batch_bodies(2 * repeat + 1, cfg.records, seed=cfg.seed, tag="P")
    service.post_trade_records(bodies[0])
    recon_service = harness.open_service(tmp / "profile-reconcile")
    size = max(cfg.recon_sizes)
    request, _ = load_store_day(recon_service, size, generate.DEFAULT_DATE, cfg.seed)
    reconcile(recon_service.storage, request)

    def accept_many(chunk):
        for body in chunk:
            service.post_trade_records(body)

    def reconcile_many():
        for _ in range(min(repeat, 3)):
            reconcile(recon_service.storage, request)

    for name, first, second in (
        ("accept", lambda: accept_many(bodies[1 : repeat + 1]), lambda: accept_many(bodies[repeat + 1 :])),
        ("reconcile", reconcile_many, reconcile_many),
    ):
        fresh()
        profiler = Profiler(interval=0.0005)
        profiler.start()
        first()
        profiler.stop()
        tree = profiler.output_text(unicode=False, color=False, time="percent_of_total")
        fresh()
        cprofile = cProfile.Profile()
        cprofile.enable()
        second()
        cprofile.disable()
        stats = pstats.Stats(cprofile)
        ranked = _ranked(stats)
        stats_out = io.StringIO()
        stats.stream = stats_out
        stats.sort_stats("cumulative").print_stats(30)
        path = out_dir / f"profile-{name}.txt"
        what = (
            f"{repeat} accepts of {cfg.records}-record batches"
            if name == "accept"
            else f"{min(repeat, 3)} reconciliations of {size:,} transactions"
        )
        path.write_text(
            f"# Profile: {what}\n\n{ranked}\n\n## pyinstrument: call tree, share of wall time "
            f"(library frames folded)\n\n{tree}\n\n## cProfile: cumulative\n\n{stats_out.getvalue()}"
        )
        written.append(path)
    return written


def _c_name(function: str) -> str:
    """ "<method 'execute' of 'sqlite3.Connection' objects>" -> "sqlite3.Connection.execute"."""
    method = re.fullmatch(r"<method '(.+)' of '(.+)' objects>", function)
    if method:
        return f"{method.group(2)}.{method.group(1)}"
    builtin = re.fullmatch(r"<built-in method (.+)>", function)
    return builtin.group(1) if builtin else function


def _ranked(stats, top: int = 25) -> str:
    """Own time (cProfile tottime) by function and by module, as shares of the total."""
    total = sum(entry[2] for entry in stats.stats.values()) or 1.0
    by_function = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:top]
    by_module: dict[str, float] = defaultdict(float)
    for (file, _, function), entry in stats.stats.items():
        module = file if file != "~" else f"C: {_c_name(function)}"
        module = module.replace(str(ROOT) + "/", "")
        module = re.sub(r".*/(site-packages|lib/python3\.\d+)/", r"\1/", module)
        by_module[module] += entry[2]
    lines = [
        f"## cProfile: own time by function (total {total:.3f} s under the profiler)",
        "",
        "share    own s  calls      function",
    ]
    for (file, line, function), (_, calls, own, _, _) in by_function:
        where = file.replace(str(ROOT) + "/", "")
        where = re.sub(r".*/(site-packages|lib/python3\.\d+)/", r"\1/", where)
        name = f"C: {_c_name(function)}" if file == "~" else f"{function} ({where}:{line})"
        lines.append(f"{own / total:6.1%}  {own:6.3f}  {calls:<9}  {name}")
    lines += ["", "## cProfile: own time by module", "", "share    own s  module"]
    for module, own in sorted(by_module.items(), key=lambda item: -item[1])[:15]:
        lines.append(f"{own / total:6.1%}  {own:6.3f}  {module}")
    return "\n".join(lines)
