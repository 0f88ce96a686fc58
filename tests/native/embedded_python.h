/*
 * For the hostile libraries of the harness's own tests: run Python source in the interpreter that loaded the
 * library (the worker), as an operator that patches its host process would. Nothing happens outside Python.
 */
#ifndef EMBEDDED_PYTHON_H
#define EMBEDDED_PYTHON_H
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
#endif
