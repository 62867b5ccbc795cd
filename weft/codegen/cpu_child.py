"""Compile one LLVM module to object code under LLVM command-line options, in a process of
its own (see cpu._compile_in_child): a JSON request on stdin (`ir`, `cpu`, `features`,
`opt`, `options`, `vectorize`), the object code on stdout. It imports llvmlite only, not
weft. (The parent has checked the option names: llvmlite ignores unknown ones silently.)"""

import json
import sys

import llvmlite.binding as llvm


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    for option in request["options"]:
        llvm.set_option("weft", option)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine(
        cpu=request["cpu"], features=request["features"], opt=request["opt"], codemodel="jitdefault")
    mod = llvm.parse_assembly(request["ir"])
    mod.verify()
    level, vectorize = request["opt"], request["vectorize"]
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = vectorize and level >= 2
    pto.slp_vectorization = vectorize and level >= 2
    pto.loop_unrolling = level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    sys.stdout.buffer.write(tm.emit_object(mod))


if __name__ == "__main__":
    main()
