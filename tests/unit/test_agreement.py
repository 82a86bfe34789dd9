"""zerocopy.agreement: comparing two runs' detections."""




def test_compare_runs_counts_matches_extras_and_score_drift():
    from zerocopy.agreement import compare_runs

    ref = [{"detections": [{"box": [0, 0, 10, 10], "score": 0.9}]},
           {"detections": [{"box": [0, 0, 10, 10], "score": 0.8}]}]
    other = [{"detections": [{"box": [1, 0, 11, 10], "score": 0.85}, {"box": [50, 50, 60, 60], "score": 0.6}]},
             {"detections": []}]
    r = compare_runs(ref, other)
    assert r["matched_share"] == 0.5 and r["extra"] == 1 and r["reference_detections"] == 2
    assert abs(r["max_score_diff"] - 0.05) < 1e-6 and abs(r["mean_iou"] - 90 / 110) < 1e-3
