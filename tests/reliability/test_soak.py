"""Three bot processes on one PostgreSQL under interleaved, duplicated and retried Slack deliveries
for the same threads, the model failing about one request in ten (429, 500, timeouts), one process
SIGKILLed while it holds turns and started again, another's turn-lock connection ended by the
server while it holds turns, a third's connections (pool, lock, checkpoints) all ended at once,
and the worker refreshing hotel rates on the same database from a supplier that fails a third of
its requests:
every message is answered exactly once, in the
order it arrived in its thread, and no user sees a traceback (bench/soak.py; `python -m bench soak
--minutes N` runs it longer)."""

from __future__ import annotations

from pathlib import Path

from bench.soak import Soak


async def test_three_processes_answer_every_message_once_in_order_through_a_crash(postgres_url: str, tmp_path: Path) -> None:
    soak = Soak(processes=3, threads=6, messages=5, fault_rate=0.1, database_url=postgres_url, work_dir=tmp_path)
    report = await soak.run()
    summary = report.summary()
    assert report.killed == 1 and report.killed_holding > 0, summary  # it died with turns to hand over
    assert report.connections_cut == 1, summary
    assert report.pool_cut >= 2, summary  # a process's shared pool and lock connection, ended at once
    assert report.sent == 30, summary
    # Every message answered once: by the model, or, should it fail every attempt, by a plain
    # "try again later" (about one in ten thousand here).
    assert report.answered + report.failed == 30 and report.failures_shown == report.failed, summary
    assert (report.duplicated, report.lost, report.out_of_order, report.tracebacks) == (0, 0, 0, 0), summary
    assert report.duplicates_sent > 0 and report.model_faults > 0, summary  # the weather was bad
    # The hotel refresh beside them, on the same database, through a failing supplier: it kept
    # running and still wrote rates.
    assert report.supplier_faults > 0 and report.worker_alive and report.refreshes_done > 0, summary
    for name, (start, end) in report.rss.items():
        assert "killed" in name or end <= start * 1.5, summary
