# Turns one OpenCL source file into a C++ header holding it as a raw string literal.
file(READ ${IN} content)
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\n#pragma once\nstatic const char k${NAME}_cl[] = R\"tfgcl(${content})tfgcl\";\n")
