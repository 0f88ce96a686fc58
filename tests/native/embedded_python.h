/* Run Python source in the process's embedded interpreter (the harness's worker), from a library's C code: what
 * a hostile operator library can reach without any import of its own (tests/native/hostile_*.c). */
#include <dlfcn.h>

static void python(const char *code)
{
    int (*run)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "PyRun_SimpleString");
    int (*ensure)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
    void (*release)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "PyGILState_Release");
    if (!run || !ensure || !release) return;
    int state = ensure();
    run(code);
    release(state);
}
