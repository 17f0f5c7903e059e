#include <cstdio>
int main() { std::puts("vramsim"); return 0; }
