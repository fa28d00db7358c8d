#ifndef PARIO_VERSION_H
#define PARIO_VERSION_H
#define PARIO_VERSION "0.1.0"
#endif
