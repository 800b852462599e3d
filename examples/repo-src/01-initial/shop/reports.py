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
