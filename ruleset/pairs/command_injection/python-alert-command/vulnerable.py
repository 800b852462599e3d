def run_alert_hook(hook, alert_name):
    import subprocess
    return subprocess.run(hook + " '" + alert_name + "'", shell=True, check=False).returncode
