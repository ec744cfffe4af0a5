#!/usr/bin/env python3
"""CI: the Kubernetes manifests of deploy/k8s, kept honest without a cluster.

Checks that deploy/k8s/explore-job.yaml and merge-job.yaml are well-formed
YAML (PyYAML, Debian's python3-yaml) and that they run what the Slurm array
runs: the same deploy/shard.sh command lines as deploy/slurm/explore.sbatch
(`run` with the engine's index, and `merge`), with the settings shard.sh
reads; SHARDS equal to the Job's completions and parallelism; the same
SCENARIO, SEEDS, SHARDS and RESULTS in both Jobs; the results volume mounted
at RESULTS from one ReadWriteMany claim; a grace period longer than
--run-timeout. Then it breaks copies of the manifests in ways it must catch,
and fails if any goes unnoticed.

    python3 .ci/k8s-check.py
"""

import copy
import os
import re
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXPLORE = "deploy/k8s/explore-job.yaml"
MERGE = "deploy/k8s/merge-job.yaml"
SBATCH = "deploy/slurm/explore.sbatch"
SHARD = "deploy/shard.sh"
SHARED = ["SCENARIO", "SEEDS", "SHARDS", "RESULTS"]


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def shard_commands(sbatch):
    """The sbatch file's deploy/shard.sh command lines, by subcommand, with
    the array index written INDEX."""
    out = {}
    for line in sbatch.splitlines():
        line = line.strip()
        if "deploy/shard.sh" in line and not line.startswith("#"):
            line = line.replace('"$SLURM_ARRAY_TASK_ID"', "INDEX")
            out[line.split("deploy/shard.sh", 1)[1].split()[0]] = line
    return out


def container_command(job, index_var):
    """The shell command line of the Job's one container, the pod index
    written INDEX."""
    container = job["spec"]["template"]["spec"]["containers"][0]
    command = container.get("command", []) + container.get("args", [])
    if command[:2] != ["sh", "-c"] or len(command) != 3:
        return None
    if index_var is None:
        return command[2]
    return command[2].replace(f'"${index_var}"', "INDEX")


def env(job):
    container = job["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def seconds(duration):
    m = re.fullmatch(r"(\d+)(ms|s|m|h)", duration or "")
    if not m:
        return None
    return int(m[1]) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m[2]]


def results_claim(job, results):
    """The claim mounted at RESULTS, or None."""
    spec = job["spec"]["template"]["spec"]
    mounts = spec["containers"][0].get("volumeMounts", [])
    names = [m["name"] for m in mounts if m.get("mountPath") == results]
    for volume in spec.get("volumes", []):
        if names and volume["name"] == names[0]:
            return volume.get("persistentVolumeClaim", {}).get("claimName")
    return None


def check(explore_docs, merge_docs, sbatch, shard):
    problems = []
    say = problems.append
    for name, docs in [(EXPLORE, explore_docs), (MERGE, merge_docs)]:
        for doc in docs:
            for key in ["apiVersion", "kind"]:
                if not isinstance(doc, dict) or key not in doc:
                    say(f"{name}: a document without {key}")
            if isinstance(doc, dict) and not doc.get("metadata", {}).get("name"):
                say(f"{name}: a {doc.get('kind')} without metadata.name")
    jobs = [d for d in explore_docs if isinstance(d, dict) and d.get("kind") == "Job"]
    claims = {
        d["metadata"]["name"]: d
        for d in explore_docs
        if isinstance(d, dict) and d.get("kind") == "PersistentVolumeClaim"
    }
    merges = [d for d in merge_docs if isinstance(d, dict) and d.get("kind") == "Job"]
    if len(jobs) != 1 or len(merges) != 1:
        say(f"expected one Job in each of {EXPLORE} and {MERGE}")
        return problems
    job, merge = jobs[0], merges[0]
    spec = job["spec"]
    e, m = env(job), env(merge)

    # The Indexed Job: one pod per shard, all at once.
    if spec.get("completionMode") != "Indexed":
        say(f"{EXPLORE}: completionMode is {spec.get('completionMode')}, not Indexed")
    shards = e.get("SHARDS")
    if not (shards and shards.isdigit() and int(shards) > 0):
        say(f"{EXPLORE}: SHARDS is {shards!r}, not a number of shards")
    else:
        for key in ["completions", "parallelism"]:
            if spec.get(key) != int(shards):
                say(f"{EXPLORE}: {key} is {spec.get(key)}, SHARDS is {shards}")
    for name, j in [(EXPLORE, job), (MERGE, merge)]:
        if j["spec"]["template"]["spec"].get("restartPolicy") != "Never":
            say(f"{name}: restartPolicy is not Never (a retried pod must be a new pod)")

    # The same command lines as the Slurm array's.
    slurm = shard_commands(sbatch)
    for name, j, sub, index in [
        (EXPLORE, job, "run", "JOB_COMPLETION_INDEX"),
        (MERGE, merge, "merge", None),
    ]:
        line = container_command(j, index)
        if sub not in slurm:
            say(f"{SBATCH}: no `deploy/shard.sh {sub}` line")
        elif line != slurm[sub]:
            say(f"{name}: runs {line!r}, {SBATCH} runs {slurm[sub]!r}")

    # The settings: those shard.sh reads, the same in both Jobs.
    for key in SHARED:
        if not e.get(key):
            say(f"{EXPLORE}: no {key}")
        if m.get(key) != e.get(key):
            say(f"{MERGE}: {key} is {m.get(key)!r}, {EXPLORE} has {e.get(key)!r}")
    for name, values in [(EXPLORE, e), (MERGE, m)]:
        for key in values:
            if "${" + key not in shard:
                say(f"{name}: {key} is not a setting {SHARD} reads")
    if not re.fullmatch(r"\d+\.\.=?\d+", e.get("SEEDS") or ""):
        say(f"{EXPLORE}: SEEDS is {e.get('SEEDS')!r}, not A..B")
    scenario = e.get("SCENARIO") or ""
    if not os.path.isfile(os.path.join(ROOT, scenario)):
        say(f"{EXPLORE}: SCENARIO {scenario!r} is not a file of the repository")
    if e.get("SHARD_SIGNALS", "forward") != "forward":
        say(f"{EXPLORE}: Kubernetes signals only the first process: SHARD_SIGNALS must be forward")
    timeout = seconds(e.get("RUN_TIMEOUT", "60s"))
    grace = job["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30)
    if timeout is None or grace <= timeout:
        say(f"{EXPLORE}: terminationGracePeriodSeconds {grace} is not longer than RUN_TIMEOUT")

    # One shared volume, mounted at RESULTS in both, writable by every pod.
    claim = results_claim(job, e.get("RESULTS"))
    if claim is None:
        say(f"{EXPLORE}: no volume mounted at RESULTS {e.get('RESULTS')!r}")
    elif claim not in claims:
        say(f"{EXPLORE}: the claim {claim!r} is not defined in it")
    elif "ReadWriteMany" not in claims[claim]["spec"].get("accessModes", []):
        say(f"{EXPLORE}: the claim {claim!r} is not ReadWriteMany")
    if results_claim(merge, m.get("RESULTS")) != claim:
        say(f"{MERGE}: RESULTS is not the explore Job's claim {claim!r}")
    return problems


def broken(explore_docs, merge_docs):
    """Copies of the manifests, each with one mistake the check must find."""

    def job(docs):
        return next(d for d in docs if d["kind"] == "Job")

    def container(docs):
        return job(docs)["spec"]["template"]["spec"]["containers"][0]

    def set_env(docs, key, value):
        for item in container(docs)["env"]:
            if item["name"] == key:
                item["value"] = value

    cases = []

    def case(what, change):
        docs = (copy.deepcopy(explore_docs), copy.deepcopy(merge_docs))
        change(*docs)
        cases.append((what, docs))

    case("completions differ from SHARDS", lambda x, _: job(x)["spec"].update(completions=7))
    case("parallelism differs from SHARDS", lambda x, _: job(x)["spec"].update(parallelism=4))
    case("another SHARDS in the merge", lambda _, y: set_env(y, "SHARDS", "4"))
    case("another SEEDS in the merge", lambda _, y: set_env(y, "SEEDS", "0..100"))
    case(
        "another command line",
        lambda x, _: container(x).update(command=["sh", "-c", "fencesim explore x --json"]),
    )
    case("a missing scenario", lambda x, _: set_env(x, "SCENARIO", "scenarios/nope.toml"))
    case("signals not passed on", lambda x, _: set_env(x, "SHARD_SIGNALS", "direct"))
    case(
        "a setting shard.sh ignores",
        lambda x, _: container(x)["env"].append({"name": "SHARD_COUNT", "value": "8"}),
    )
    case(
        "a short grace period",
        lambda x, _: job(x)["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=30),
    )
    case("not indexed", lambda x, _: job(x)["spec"].pop("completionMode"))
    return cases


def main():
    texts = {path: read(path) for path in [EXPLORE, MERGE, SBATCH, SHARD]}
    try:
        explore_docs = list(yaml.safe_load_all(texts[EXPLORE]))
        merge_docs = list(yaml.safe_load_all(texts[MERGE]))
    except yaml.YAMLError as e:
        print(f"k8s-check: not well-formed YAML: {e}", file=sys.stderr)
        return 1
    problems = check(explore_docs, merge_docs, texts[SBATCH], texts[SHARD])
    for p in problems:
        print(f"k8s-check: {p}", file=sys.stderr)
    if problems:
        return 1
    unnoticed = [
        what
        for what, (x, y) in broken(explore_docs, merge_docs)
        if not check(x, y, texts[SBATCH], texts[SHARD])
    ]
    for what in unnoticed:
        print(f"k8s-check: a manifest with {what} passes the check", file=sys.stderr)
    if unnoticed:
        return 1
    shards = env(next(d for d in explore_docs if d["kind"] == "Job"))["SHARDS"]
    print(
        f"k8s-check: {EXPLORE} and {MERGE} are well-formed and run {SBATCH}'s "
        f"deploy/shard.sh command lines, with {shards} shards = completions = parallelism"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
