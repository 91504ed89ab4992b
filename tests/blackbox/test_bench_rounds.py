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
