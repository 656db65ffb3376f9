// libsystemc's own main() needs an sc_main; GoogleTest's main runs the tests instead.
#include <systemc>

int sc_main(int, char*[]) {
    return 0;
}
