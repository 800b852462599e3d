def export_csv(export_dir, report_name, rows):
    import csv
    import os
    safe = "".join(ch for ch in report_name if ch.isalnum() or ch in "-_")
    with open(os.path.join(export_dir, safe + ".csv"), "w", newline="") as out:
        csv.writer(out).writerows(rows)
