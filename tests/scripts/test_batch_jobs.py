#!/usr/bin/env python3
"""scripts/jobs/shardmm.slurm and shardmm.pbs run as a batch system would run them (the batch
variables set by hand), with stub srun / mpirun first on PATH that record their arguments and
environment: ranks, binding and the BLAS-thread variable reach the launcher, for one rank per
core and for threaded BLAS."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOBS = os.path.join(ROOT, "scripts", "jobs")
STUB = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\\n")
"""


class BatchJobs(unittest.TestCase):
    def run_job(self, script, env):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        for name in ("srun", "mpirun"):
            with open(os.path.join(bindir, name), "w") as f:
                f.write(STUB)
            os.chmod(os.path.join(bindir, name), stat.S_IRWXU)
        log = os.path.join(tmp, "calls.jsonl")
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("SLURM_", "PBS_", "SHARDMM_", "OMP_", "OPENBLAS_")) and k != "NCPUS"}
        full = dict(clean, PATH=bindir + os.pathsep + os.environ["PATH"], STUB_LOG=log, SHARDMM_REPO=tmp,
                    **{k: v.replace("@TMP@", tmp) for k, v in env.items()})
        p = subprocess.run(["bash", os.path.join(JOBS, script)], cwd=tmp, env=full, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        self.assertTrue(calls, "no launcher call")
        for c in calls:
            self.assertIn(os.path.join(tmp, "build", "shardmm"), c["argv"])
        return tmp, calls

    def slurm(self, cpus_per_task, ntasks_per_node):
        env = {"SLURM_SUBMIT_DIR": "@TMP@", "SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "2",
               "SLURM_NTASKS": str(2 * ntasks_per_node), "SLURM_NTASKS_PER_NODE": str(ntasks_per_node),
               "SLURM_CPUS_PER_TASK": str(cpus_per_task)}
        _, calls = self.run_job("shardmm.slurm", env)
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

    def pbs(self, env, nodefile, nodes, ranks_per_node, threads):
        env = dict(env, PBS_O_WORKDIR="@TMP@", PBS_JOBID="42.server", PBS_NODEFILE="@TMP@/nodefile")
        tmpdir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmpdir, True)
        with open(os.path.join(tmpdir, "nodefile"), "w") as f:
            f.write("".join(n + "\n" for n in nodefile))
        env["PBS_NODEFILE"] = os.path.join(tmpdir, "nodefile")
        _, calls = self.run_job("shardmm.pbs", env)
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
