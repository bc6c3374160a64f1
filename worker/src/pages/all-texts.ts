/**
 * Every text of the console, registered by importing each page group's texts: what
 * scripts/build-console.mjs writes to `STATIC_DIR/console/texts.json`, which the server reads
 * (texts.ts, `loadTexts`). A new page group's texts module is imported here.
 */
import './base-texts.js';
import './ui-texts.js';
import './problem-texts.js';
import './admin-texts.js';
import './overview-texts.js';
import './security-texts.js';
import './settings-texts.js';
import './mail-texts.js';

export { dictionaries } from './texts.js';
