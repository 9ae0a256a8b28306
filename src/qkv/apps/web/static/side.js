"use strict";
// side panel (see PANELS in app.js)
