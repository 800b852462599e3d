def export_csv(export_dir, report_name, rows):
    import csv
    import os
    with open(os.path.join(export_dir, report_name + ".csv"), "w", newline="") as out:
        csv.writer(out).writerows(rows)
