#!/usr/bin/env python3
"""scripts/cluster/jobs/shardmm.slurm and shardmm.pbs run as a batch system would run them (the batch
variables set by hand), with stub srun / mpirun / ssh first on PATH that record their arguments
and environment: ranks, binding and the BLAS-thread variable reach the launcher, for one rank per
core and for threaded BLAS; srun starts ranks through PMIx; PBS runs bash, checks ssh before a
hostfile launch and skips both with Open MPI's TM support (a stub ompi_info says which); the
environment step (SHARDMM_SETUP) runs first, a missing launcher or library stops the job before
any rank starts; ScaLAPACK is a contender only when asked for."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOBS = os.path.join(ROOT, "scripts", "cluster", "jobs")
# This interpreter, without site packages (-S: no .pth imports) or PYTHON* variables (-I): a
# start of a few tens of milliseconds instead of one that imports whatever site-packages holds.
STUB = "#!" + sys.executable + """ -IS
import json, os, sys
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\\n")
"""
# ssh, ompi_info and ldd in sh (a Python start per call is slow on a loaded machine): argv only.
SH_STUB = r"""#!/bin/sh
{ printf '{"argv": ["%s"' "$0"; for a in "$@"; do printf ', "%s"' "$a"; done; printf ']}\n'; } >>"$STUB_LOG"
case ${0##*/} in
  ssh) [ -z "$STUB_SSH_FAILS" ] || exit 255 ;;
  ompi_info)
    echo "                 MCA plm: rsh (MCA v2.1.0, API v2.0.0, Component v4.1.4)"
    [ -z "$STUB_TM" ] || echo "                 MCA plm: tm (MCA v2.1.0, API v2.0.0, Component v4.1.4)" ;;
  ldd) [ -z "$STUB_LDD_MISSING" ] || printf '\tlibmpi.so.40 => not found\n' ;;
esac
"""
STUBS = {"srun": STUB, "mpirun": STUB, "ssh": SH_STUB, "ompi_info": SH_STUB, "ldd": SH_STUB}


class BatchJobs(unittest.TestCase):
    def run_job(self, script, env, returncode=0, launcher=True):
        """Runs the job; returns (tmp, launcher calls, stub calls, the process)."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        for name, text in STUBS.items():
            with open(os.path.join(bindir, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(bindir, name), stat.S_IRWXU)
        if launcher:  # the repository's build/shardmm, as built on the cluster
            os.makedirs(os.path.join(tmp, "build"))
            with open(os.path.join(tmp, "build", "shardmm"), "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(os.path.join(tmp, "build", "shardmm"), stat.S_IRWXU)
        log = os.path.join(tmp, "calls.jsonl")
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("SLURM_", "PBS_", "SHARDMM_", "OMP_", "OPENBLAS_", "STUB_"))
                 and k != "NCPUS"}
        full = dict(clean, PATH=bindir + os.pathsep + os.environ["PATH"], STUB_LOG=log, SHARDMM_REPO=tmp,
                    **{k: v.replace("@TMP@", tmp) for k, v in env.items()})
        p = subprocess.run(["bash", os.path.join(JOBS, script)], cwd=tmp, env=full, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, returncode, p.stdout + p.stderr)
        stubs = []
        if os.path.exists(log):
            with open(log) as f:
                stubs = [json.loads(line) for line in f]
        calls = [c for c in stubs if os.path.basename(c["argv"][0]) in ("srun", "mpirun")]
        if returncode == 0:
            self.assertTrue(calls, "no launcher call")
        for c in calls:
            self.assertIn(os.path.join(tmp, "build", "shardmm"), c["argv"])
        return tmp, calls, stubs, p

    SLURM_ENV = {"SLURM_SUBMIT_DIR": "@TMP@", "SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "2",
                 "SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "2", "SLURM_CPUS_PER_TASK": "1"}

    def slurm(self, cpus_per_task, ntasks_per_node):
        env = {"SLURM_SUBMIT_DIR": "@TMP@", "SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "2",
               "SLURM_NTASKS": str(2 * ntasks_per_node), "SLURM_NTASKS_PER_NODE": str(ntasks_per_node),
               "SLURM_CPUS_PER_TASK": str(cpus_per_task)}
        _, calls, _, _ = self.run_job("shardmm.slurm", env)
        self.assertEqual(len(calls), 2)  # the square and the tall-skinny problem
        for c in calls:
            args = c["argv"][1:]
            self.assertIn("--ntasks=%d" % (2 * ntasks_per_node), args)
            self.assertIn("--ntasks-per-node=%d" % ntasks_per_node, args)
            self.assertIn("--cpus-per-task=%d" % cpus_per_task, args)  # explicit, not inherited
            self.assertIn("--cpu-bind=cores", args)
            self.assertEqual(c["env"]["OPENBLAS_NUM_THREADS"], str(cpus_per_task))
            self.assertEqual(c["env"]["OMP_NUM_THREADS"], str(cpus_per_task))

    def test_slurm_rank_per_core(self):
        self.slurm(cpus_per_task=1, ntasks_per_node=32)

    def test_slurm_threaded(self):
        self.slurm(cpus_per_task=16, ntasks_per_node=2)

    def test_slurm_pmix_and_plugin_knob(self):
        """srun starts the ranks through PMIx unless SHARDMM_SRUN_MPI names another plugin or none."""
        _, calls, _, _ = self.run_job("shardmm.slurm", self.SLURM_ENV)
        for c in calls:
            self.assertIn("--mpi=pmix", c["argv"])
        _, calls, _, _ = self.run_job("shardmm.slurm", dict(self.SLURM_ENV, SHARDMM_SRUN_MPI="pmi2"))
        for c in calls:
            self.assertIn("--mpi=pmi2", c["argv"])
            self.assertNotIn("--mpi=pmix", c["argv"])
        _, calls, _, _ = self.run_job("shardmm.slurm", dict(self.SLURM_ENV, SHARDMM_SRUN_MPI="none"))
        for c in calls:
            self.assertFalse([a for a in c["argv"] if a.startswith("--mpi")], c["argv"])

    def algos(self, call):
        args = call["argv"]
        return args[args.index("--algo") + 1]

    def test_scalapack_optional(self):
        """Without a knob the jobs benchmark shardmm alone; SHARDMM_ALGOS adds ScaLAPACK."""
        for script, env in (("shardmm.slurm", self.SLURM_ENV), ("shardmm.pbs", self.pbs_env())):
            with self.subTest(script=script):
                _, calls, _, _ = self.run_job(script, env)
                self.assertEqual([self.algos(c) for c in calls], ["auto"] * len(calls))
                _, calls, _, _ = self.run_job(script, dict(env, SHARDMM_ALGOS="auto,scalapack"))
                self.assertEqual([self.algos(c) for c in calls], ["auto,scalapack"] * len(calls))

    def test_environment_step(self):
        """SHARDMM_SETUP is sourced before the launch; the scripts show where module loads go."""
        for script in ("shardmm.slurm", "shardmm.pbs"):
            with open(os.path.join(JOBS, script)) as f:
                text = f.read()
            self.assertIn("# module load", text)
            self.assertIn("site's MPI", text)
        setup = os.path.join(tempfile.mkdtemp(), "setup.sh")
        self.addCleanup(shutil.rmtree, os.path.dirname(setup), True)
        with open(setup, "w") as f:
            f.write("export SHARDMM_FROM_SETUP=loaded\n")
        _, calls, _, _ = self.run_job("shardmm.slurm", dict(self.SLURM_ENV, SHARDMM_SETUP=setup))
        for c in calls:
            self.assertEqual(c["env"].get("SHARDMM_FROM_SETUP"), "loaded")

    def test_launcher_missing_or_unloadable(self):
        """No rank starts when build/shardmm is missing or a library it needs is not found."""
        for script, env in (("shardmm.slurm", self.SLURM_ENV), ("shardmm.pbs", self.pbs_env())):
            with self.subTest(script=script):
                _, calls, _, p = self.run_job(script, env, returncode=1, launcher=False)
                self.assertEqual(calls, [])
                self.assertIn("build/shardmm not found: build it on the cluster", p.stderr)
                _, calls, _, p = self.run_job(script, dict(env, STUB_LDD_MISSING="1"), returncode=1)
                self.assertEqual(calls, [])
                self.assertIn("libmpi.so.40 => not found", p.stderr)

    def nodefile(self, nodes):
        tmpdir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmpdir, True)
        with open(os.path.join(tmpdir, "nodefile"), "w") as f:
            f.write("".join(n + "\n" for n in nodes))
        return os.path.join(tmpdir, "nodefile")

    def pbs_env(self, **extra):
        return dict({"PBS_O_WORKDIR": "@TMP@", "PBS_JOBID": "42.server", "PBS_NUM_PPN": "2",
                     "PBS_NODEFILE": self.nodefile(["n1", "n1", "n2", "n2", "n3", "n3"])}, **extra)

    def test_pbs_hostfile_checks_ssh(self):
        """Without TM support: a hostfile, and ssh to every other node checked before mpirun."""
        _, calls, stubs, _ = self.run_job("shardmm.pbs", self.pbs_env())
        ssh = [c["argv"] for c in stubs if os.path.basename(c["argv"][0]) == "ssh"]
        self.assertEqual([a[-2] for a in ssh], ["n2", "n3"])
        self.assertTrue(all("BatchMode=yes" in a for a in ssh), ssh)
        self.assertIn("--hostfile", calls[0]["argv"])
        _, calls, _, p = self.run_job("shardmm.pbs", self.pbs_env(STUB_SSH_FAILS="1"), returncode=1)
        self.assertEqual(calls, [])
        self.assertIn("cannot ssh to n2 without a password", p.stderr)
        self.assertIn("SHARDMM_LAUNCH=tm", p.stderr)

    def test_pbs_tm_launch(self):
        """Open MPI with TM support (ompi_info), or SHARDMM_LAUNCH=tm: no hostfile, no ssh."""
        for extra in ({"STUB_TM": "1"}, {"SHARDMM_LAUNCH": "tm", "STUB_SSH_FAILS": "1"}):
            with self.subTest(**extra):
                _, calls, stubs, p = self.run_job("shardmm.pbs", self.pbs_env(**extra))
                self.assertNotIn("--hostfile", calls[0]["argv"])
                self.assertEqual([c for c in stubs if os.path.basename(c["argv"][0]) == "ssh"], [])
                self.assertIn("(tm)", p.stdout)
                self.assertEqual(int(calls[0]["argv"][calls[0]["argv"].index("-n") + 1]), 6)
        self.run_job("shardmm.pbs", self.pbs_env(SHARDMM_LAUNCH="bogus"), returncode=2)

    def pbs(self, env, nodefile, nodes, ranks_per_node, threads):
        env = dict(env, PBS_O_WORKDIR="@TMP@", PBS_JOBID="42.server", PBS_NODEFILE="@TMP@/nodefile")
        tmpdir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmpdir, True)
        with open(os.path.join(tmpdir, "nodefile"), "w") as f:
            f.write("".join(n + "\n" for n in nodefile))
        env["PBS_NODEFILE"] = os.path.join(tmpdir, "nodefile")
        _, calls, _, _ = self.run_job("shardmm.pbs", env)
        self.assertEqual(len(calls), 1)
        args = calls[0]["argv"][1:]
        n = args[args.index("-n") + 1]
        self.assertEqual(int(n), nodes * ranks_per_node)
        mapping = args[args.index("--map-by") + 1]
        self.assertEqual(mapping, "ppr:%d:node" % ranks_per_node + (":pe=%d" % threads if threads > 1 else ""))
        self.assertEqual(args[args.index("--bind-to") + 1], "core")
        exported = [args[i + 1] for i, a in enumerate(args) if a == "-x"]
        self.assertIn("OPENBLAS_NUM_THREADS", exported)  # mpirun passes it to remote ranks
        self.assertIn("OMP_NUM_THREADS", exported)
        self.assertEqual(calls[0]["env"]["OPENBLAS_NUM_THREADS"], str(threads))
        with open(args[args.index("--hostfile") + 1]) as f:
            hosts = f.read().split("\n")
        self.assertEqual([h for h in hosts if h],
                         ["%s slots=%d" % (h, ranks_per_node * threads) for h in dict.fromkeys(nodefile)])

    def test_pbs_pro_rank_per_core(self):  # select=2:ncpus=4:mpiprocs=4:ompthreads=1
        self.pbs({"NCPUS": "4", "OMP_NUM_THREADS": "1"}, ["n1"] * 4 + ["n2"] * 4, 2, 4, 1)

    def test_pbs_pro_threaded(self):  # select=2:ncpus=4:mpiprocs=1:ompthreads=4
        self.pbs({"NCPUS": "4", "OMP_NUM_THREADS": "4"}, ["n1", "n2"], 2, 1, 4)

    def test_torque_rank_per_core(self):  # nodes=2:ppn=4
        self.pbs({"PBS_NUM_PPN": "4"}, ["n1"] * 4 + ["n2"] * 4, 2, 4, 1)

    def test_torque_threaded(self):  # nodes=2:ppn=4, qsub -v SHARDMM_BLAS_THREADS=2
        self.pbs({"PBS_NUM_PPN": "4", "SHARDMM_BLAS_THREADS": "2"}, ["n1"] * 4 + ["n2"] * 4, 2, 2, 2)

    def test_pbs_directives(self):
        """PBS Pro's select= is the active request; Torque's nodes=:ppn= is there, commented out."""
        with open(os.path.join(JOBS, "shardmm.pbs")) as f:
            lines = f.read().splitlines()
        self.assertTrue(any(l.startswith("#PBS -l select=") and "mpiprocs=" in l for l in lines))
        self.assertTrue(any(l.startswith("##PBS -l nodes=") and ":ppn=" in l for l in lines))

    def test_pbs_runs_bash(self):
        """#PBS -S /bin/bash among the directives (before the first command): PBS otherwise runs
        the script in the user's login shell, whatever its #! line says."""
        with open(os.path.join(JOBS, "shardmm.pbs")) as f:
            lines = f.read().splitlines()
        first_command = next(i for i, l in enumerate(lines) if l and not l.startswith("#"))
        self.assertIn("#PBS -S /bin/bash", lines[:first_command])


if __name__ == "__main__":
    unittest.main(verbosity=2)
