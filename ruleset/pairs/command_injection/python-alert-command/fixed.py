def run_alert_hook(hook, alert_name):
    import subprocess
    import shlex
    return subprocess.run([*shlex.split(hook), alert_name], check=False).returncode
