"""The benchmark driver's arithmetic for scenarios that take turns in rounds (bench/driver.py)."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location("bench_driver", os.path.join(os.path.dirname(__file__), "..", "..", "bench", "driver.py"))
driver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(driver)


def turn(rps, requests, p50, p99, errors=0, loadgen=0.2, cores=1.5):
    return {"rps": rps, "requests": requests, "p50_ms": p50, "p99_ms": p99, "errors": errors,
            "loadgen_cpu_share": loadgen, "server_cpu_cores": cores}


def test_a_row_counts_every_rounds_requests_over_their_seconds():
    # 38,000 requests in 2 + 2 + 1 s: 7,600/s, not the mean of the rates (7,667): a 1 s round weighs
    # half as much as a 2 s one.
    row = driver.combined("x", [turn(10000, 20000, 1.0, 3.0), turn(5000, 10000, 2.0, 9.0), turn(8000, 8000, 1.5, 4.0)])
    assert row["requests"] == 38000
    assert row["rps"] == round(38000 / 5, 2)
    assert row["p50_ms"] == 1.5 and row["p99_ms"] == 4.0  # the median round's
    assert [r["rps"] for r in row["rounds"]] == [10000, 5000, 8000]


def test_errors_of_any_round_count():
    row = driver.combined("x", [turn(100, 100, 1, 2), turn(100, 100, 1, 2, errors=3)])
    assert row["errors"] == 3


def test_ratios_compare_whole_rows_and_list_each_round():
    a = driver.combined("a", [turn(30000, 60000, 1, 3), turn(10000, 20000, 1, 3)])
    c = driver.combined("c", [turn(9000, 18000, 3, 7), turn(5000, 10000, 3, 7)])
    rows = [a | {"id": "a"}, a | {"id": "b"}, c | {"id": "c"},
            turn(500, 1000, 10, 20) | {"id": "d", "what": "d"}, turn(40, 80, 100, 200) | {"id": "e", "what": "e"},
            turn(20000, 40000, 1, 5) | {"id": "f", "what": "f"}]
    results = {"date": "now", "cores": 2, "build": "release", "quick": False, "scenarios": rows,
               "limits": {"fsync_per_s": 5000, "argon2id_per_s_per_core": 50, "ed25519_verify_per_s_per_core": 15000,
                          "ed25519_sign_per_s_per_core": 40000}}
    driver.report(results)
    ratios = results["ratios"]
    assert ratios["c_over_a"] == 0.35  # 7,000/s over 20,000/s, all rounds together (by round 0.3 and 0.5)
    assert ratios["c_over_a_by_round"] == [0.3, 0.5]
    assert ratios["b_over_a_by_round"] == [1.0, 1.0]


def run_with(c_rps, **figures):
    """The verdicts of a run with these figures."""
    return results_with(c_rps, **figures)["targets"]


def results_with(c_rps, b_rps=24000, f_p99=6.0, f_errors=0, storm_errors=0, g64_rps=100000, startup_1m=3.0, write_1m=0.25,
                 rss_1m=715, quick=False, write_rounds_1k=None, write_rounds_1m=None):
    a = driver.combined("a", [turn(30000, 60000, 1, 3)])
    rows = [a | {"id": "a"}, driver.combined("b", [turn(b_rps, b_rps * 2, 1, 4)]) | {"id": "b"},
            driver.combined("c", [turn(c_rps, c_rps * 2, 3, 7)]) | {"id": "c"},
            turn(500, 1000, 10, 20) | {"id": "d", "what": "d"}, turn(40, 80, 100, 200) | {"id": "e", "what": "e"},
            turn(20000, 40000, 1, f_p99, errors=f_errors) | {"id": "f", "what": "f", "storm_errors": storm_errors},
            {"id": "g", "what": "g1", "writers": 1, "rps": 4000, "p50_ms": 0.2, "p99_ms": 0.5},
            {"id": "g", "what": "g64", "writers": 64, "rps": g64_rps, "p50_ms": 0.4, "p99_ms": 2.0},
            {"id": "g", "what": "1k", "users": 1000, "write_p50_ms": 0.2, "write_p99_ms": 0.4, "startup_s": 0.01, "rss_bytes_per_user": 4000},
            {"id": "g", "what": "100k", "users": 100000, "write_p50_ms": 0.2, "write_p99_ms": 0.4, "startup_s": 0.25, "rss_bytes_per_user": 876},
            {"id": "g", "what": "1M", "users": 1000000, "write_p50_ms": write_1m, "write_p99_ms": 0.4, "startup_s": startup_1m, "rss_bytes_per_user": rss_1m}]
    if write_rounds_1k:
        rows[-3]["write_rounds_p50_ms"], rows[-1]["write_rounds_p50_ms"] = write_rounds_1k, write_rounds_1m
    results = {"date": "now", "cores": 2, "build": "release", "quick": quick, "scenarios": rows,
               "limits": {"fsync_per_s": 5000, "argon2id_per_s_per_core": 50, "ed25519_verify_per_s_per_core": 15000,
                          "ed25519_sign_per_s_per_core": 40000}}
    driver.report(results)
    return results


def test_targets_are_judged_on_unrounded_figures():
    met = run_with(c_rps=9000)  # 0.30 x (a)
    assert all(t["met"] for t in met.values()), met
    assert set(met) == {"(b) >= 0.7 x (a)", "(c) >= 0.3 x (a)", "(f) p99 <= 3 x (b) p99", "(g) 64 writers >= 20 x 1",
                        "write p50 1M <= 1.3 x 1k", "start-up 1M <= 12 x 100k", "start-up 1M < 10 s", "memory at 1M <= 2 KiB per user"}
    # 8,910/s over 30,000/s is 0.297: printed with two decimals it would read 0.30, and it misses.
    missed = run_with(c_rps=8910)
    assert missed["(c) >= 0.3 x (a)"] == {"value": 0.297, "bound": 0.3, "met": False}
    assert missed["(b) >= 0.7 x (a)"]["met"]


def test_each_bound_fails_when_crossed():
    def missed(**figures):
        return {name for name, t in run_with(**{"c_rps": 9000} | figures).items() if not t["met"]}

    assert missed(b_rps=20970) == {"(b) >= 0.7 x (a)"}  # 0.699
    assert missed(f_p99=12.1) == {"(f) p99 <= 3 x (b) p99"}  # (b)'s p99 is 4 ms
    assert missed(f_errors=1) == {"(f) p99 <= 3 x (b) p99"}
    assert missed(storm_errors=2) == {"(f) p99 <= 3 x (b) p99"}  # a login of the storm failed
    assert missed(g64_rps=79900) == {"(g) 64 writers >= 20 x 1"}  # 19.975 x 4,000/s
    assert missed(write_1m=0.261) == {"write p50 1M <= 1.3 x 1k"}
    assert missed(startup_1m=3.01) == {"start-up 1M <= 12 x 100k"}  # 12.04 x the 100k open
    assert missed(startup_1m=10.5) == {"start-up 1M <= 12 x 100k", "start-up 1M < 10 s"}
    assert missed(rss_1m=2049) == {"memory at 1M <= 2 KiB per user"}


def test_a_quick_run_judges_no_target():
    # Two seconds a scenario on CI's debug build says nothing about the targets, met or not.
    assert run_with(c_rps=1000, quick=True) == {}


def test_write_latency_ratio_lists_each_round_of_the_turns():
    r = results_with(7000, write_1m=0.22, write_rounds_1k=[0.2, 0.25, 0.1], write_rounds_1m=[0.22, 0.2, 0.3])
    assert r["ratios"]["write_p50_1000000_over_1000"] == 1.1  # the pooled p50s (0.22 over 0.2)
    assert r["ratios"]["write_p50_1000000_over_1000_by_round"] == [1.1, 0.8, 3.0]
    assert "write_p50_1000000_over_1000_by_round" not in results_with(7000)["ratios"]
