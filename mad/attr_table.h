#ifndef IBSMD_MAD_ATTR_TABLE_H
#define IBSMD_MAD_ATTR_TABLE_H

#include <stdint.h>

#include "mad/mad_layout.h"

/* The layout of attribute attr_id in class mgmt_class, or NULL (and err) when unknown. */
const struct mad_layout *mad_attr_layout(uint8_t mgmt_class, uint16_t attr_id,
                                         struct mad_error *err);

#endif
