"""The hello-world pipeline of ``pipelines run_kfp_notebook``: a stage, three stages after it, a last stage.

Compiled into pipeline.yaml (``kfp dsl compile --py pipeline.py --output pipeline.yaml``, KFP 2.x); the
role submits the compiled file. Each stage sleeps ``STAGE_SECONDS``, as the reference's hello-world.
"""

from kfp import dsl

IMAGE = "registry.access.redhat.com/ubi9/python-311:latest"
STAGE_SECONDS = 30


@dsl.container_component
def stage1():
    return dsl.ContainerSpec(image=IMAGE, command=["sh", "-c"], args=["echo stage1; sleep %d" % STAGE_SECONDS])


@dsl.container_component
def stage2():
    return dsl.ContainerSpec(image=IMAGE, command=["sh", "-c"], args=["echo stage2; sleep %d" % STAGE_SECONDS])


@dsl.container_component
def stage3():
    return dsl.ContainerSpec(image=IMAGE, command=["sh", "-c"], args=["echo stage3; sleep %d" % STAGE_SECONDS])


@dsl.pipeline(name="hello-world")
def my_pipeline():
    first = stage1().set_caching_options(False)
    middle = [stage2().set_caching_options(False).after(first) for _copy in range(3)]
    stage3().set_caching_options(False).after(*middle)
