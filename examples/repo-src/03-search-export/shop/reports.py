"""Monthly sales reports, rendered by the reporting script."""

import subprocess


def build_sales_report(month: str) -> bytes:
    # The month is passed as one argument; no shell is involved.
    result = subprocess.run(
        ["python", "-m", "shop.render_report", "--month", month],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return result.stdout


def export_report(month: str, fmt: str = "csv") -> str:
    """Render the month's report and compress it for download; returns the archive path."""
    target = f"/tmp/sales-{month}.{fmt}.gz"
    subprocess.run(
        f"python -m shop.render_report --month {month} --format {fmt} | gzip > {target}",
        shell=True,
        check=True,
        timeout=120,
    )
    return target
